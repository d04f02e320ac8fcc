//! The names of the `workspace/executeCommand` commands, apart from their
//! arguments ([`crate::commands`]) so that the code lenses
//! ([`crate::handlers`]) and the capabilities ([`crate::server`]) name them
//! without depending on how they run.

/// Declares [`CommandName`], its wire names and the list of all of them from
/// one table, so a new command cannot be advertised under one name and parsed
/// under another.
macro_rules! command_names {
    ($($variant:ident = $name:literal,)*) => {
        /// A command this server runs, before its arguments are read.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum CommandName {
            $($variant,)*
        }

        impl CommandName {
            /// Every command, in the order they are advertised.
            pub(crate) const ALL: &[CommandName] = &[$(CommandName::$variant,)*];

            /// The name clients send in `workspace/executeCommand`.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(CommandName::$variant => $name,)*
                }
            }
        }
    };
}

command_names! {
    ShowGraph = "streetrace.showGraph",
    PreviewPrompt = "streetrace.previewPrompt",
    Run = "streetrace.run",
    Debug = "streetrace.debug",
    Try = "streetrace.try",
}

impl CommandName {
    /// The command called `name`, if this server runs one.
    pub(crate) fn from_name(name: &str) -> Option<CommandName> {
        CommandName::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// The command of a references-count lens. The client runs it (VS Code's
/// extension hands its arguments to `editor.action.showReferences`, Neovim's
/// plugin lists the locations), so the server does not advertise it.
pub(crate) const SHOW_REFERENCES: &str = "streetrace.showReferences";
