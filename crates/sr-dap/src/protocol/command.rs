//! The command table: each command the adapter handles, with its typed
//! arguments. A request's `arguments` are read here once (absent arguments
//! are empty ones), so a malformed request is answered before any handler runs.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::arguments::*;

/// Why a request cannot be read: its text is the error response's message.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("sr-dap does not handle the request '{0}'")]
    Unknown(String),
    #[error("bad arguments for '{command}': {source}")]
    BadArguments { command: String, source: serde_json::Error },
}

macro_rules! commands {
    ($($name:literal => $variant:ident $(($args:ty))?,)*) => {
        /// A request's command and arguments.
        #[derive(Debug, Clone)]
        pub enum Command {
            $($variant $(($args))?,)*
        }

        impl Command {
            /// Every command's name, as the client sends it.
            #[cfg(test)]
            pub const NAMES: &[&str] = &[$($name),*];

            /// Reads `command` with its `arguments`; an unknown command or
            /// arguments of the wrong shape are an error for the client.
            pub fn parse(command: &str, arguments: Value) -> Result<Command, CommandError> {
                match command {
                    $($name => Ok(commands!(@build $variant, command, arguments $(, $args)?)),)*
                    other => Err(CommandError::Unknown(other.to_string())),
                }
            }
        }
    };
    (@build $variant:ident, $command:ident, $arguments:ident, $args:ty) => {
        Command::$variant(read::<$args>($command, $arguments)?)
    };
    (@build $variant:ident, $command:ident, $arguments:ident) => {
        Command::$variant
    };
}

commands! {
    "initialize" => Initialize(InitializeArguments),
    "launch" => Launch(LaunchArguments),
    "attach" => Attach,
    "configurationDone" => ConfigurationDone,
    "setBreakpoints" => SetBreakpoints(SetBreakpointsArguments),
    "setFunctionBreakpoints" => SetFunctionBreakpoints(SetFunctionBreakpointsArguments),
    "setExceptionBreakpoints" => SetExceptionBreakpoints(SetExceptionBreakpointsArguments),
    "breakpointLocations" => BreakpointLocations(BreakpointLocationsArguments),
    "dataBreakpointInfo" => DataBreakpointInfo(DataBreakpointInfoArguments),
    "setDataBreakpoints" => SetDataBreakpoints(SetDataBreakpointsArguments),
    "continue" => Continue(ThreadArguments),
    "next" => Next(ThreadArguments),
    "stepIn" => StepIn(ThreadArguments),
    "stepOut" => StepOut(ThreadArguments),
    "stepBack" => StepBack(ThreadArguments),
    "reverseContinue" => ReverseContinue(ThreadArguments),
    "restartFrame" => RestartFrame(RestartFrameArguments),
    "pause" => Pause(ThreadArguments),
    "threads" => Threads,
    "stackTrace" => StackTrace(StackTraceArguments),
    "scopes" => Scopes(ScopesArguments),
    "variables" => Variables(VariablesArguments),
    "evaluate" => Evaluate(EvaluateArguments),
    "setVariable" => SetVariable(SetVariableArguments),
    "exceptionInfo" => ExceptionInfo(ExceptionInfoArguments),
    "terminate" => Terminate,
    "restart" => Restart(RestartArguments),
    "disconnect" => Disconnect,
    "streetraceAnswer" => Answer(AnswerArguments),
    "streetraceRunLiveFrom" => RunLiveFrom(RunLiveFromArguments),
    "streetraceForks" => Forks,
    "streetraceSwitchFork" => SwitchFork(SwitchForkArguments),
}

fn read<T: DeserializeOwned>(command: &str, arguments: Value) -> Result<T, CommandError> {
    let value = if arguments.is_null() { Value::Object(Default::default()) } else { arguments };
    serde_json::from_value(value).map_err(|source| CommandError::BadArguments { command: command.to_string(), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_command_reads_absent_arguments_and_refuses_wrong_shapes() {
        for name in Command::NAMES {
            assert!(Command::parse(name, Value::Null).is_ok(), "{name}");
        }
        assert!(matches!(
            Command::parse("stackTrace", json!({"threadId": 2})),
            Ok(Command::StackTrace(StackTraceArguments { thread_id: 2, .. }))
        ));
        assert_eq!(
            Command::parse("frobnicate", json!({})).unwrap_err().to_string(),
            "sr-dap does not handle the request 'frobnicate'"
        );
        let bad = Command::parse("setBreakpoints", json!({"source": 3})).unwrap_err().to_string();
        assert!(bad.starts_with("bad arguments for 'setBreakpoints': invalid type"), "{bad}");
    }
}
