//! Every token and node kind of the StreetRace tree.
//!
//! Keywords follow upstream's lexer: a word equal to a keyword is always that
//! keyword token. *Hard* keywords can never be names; *soft* keywords can act as a
//! name wherever the grammar accepts an identifier (see `language.md` §1.2).

/// Defines the keyword kinds, their texts and their hardness in one table so that
/// the lexer, the parser and the editor grammars cannot disagree.
macro_rules! keywords {
    ($( $kind:ident = $text:literal $hard:ident, )*) => {
        /// All keywords: `(text, kind, hard)`.
        pub const KEYWORDS: &[(&str, SyntaxKind, bool)] = &[
            $( ($text, SyntaxKind::$kind, keywords!(@hard $hard)), )*
        ];

        impl SyntaxKind {
            /// The keyword kind for `text`, if `text` is a keyword.
            pub fn from_keyword(text: &str) -> Option<SyntaxKind> {
                match text {
                    $( $text => Some(SyntaxKind::$kind), )*
                    _ => None,
                }
            }
        }
    };
    (@hard hard) => { true };
    (@hard soft) => { false };
}

#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
pub enum SyntaxKind {
    // Trivia.
    WHITESPACE = 0,
    COMMENT,
    /// One line break (`\n` or `\r\n`). Only the first line break of a run outside
    /// brackets is significant; the others are trivia.
    NEWLINE,
    /// A character no token accepts.
    ERROR_TOKEN,

    // Literals and names.
    NAME,
    DOTTED_NAME,
    PROVIDER_MODEL,
    VERSION,
    INT,
    NUMBER,
    STRING,
    INTERP_STRING,
    TRIPLE_STRING,
    MCP_URI,
    PIP_URI,
    LOCAL_PATH,

    // Punctuation.
    EQ2,
    NEQ,
    ARROW,
    GTEQ,
    LTEQ,
    COLON,
    COMMA,
    DOLLAR,
    DOT,
    EQ,
    L_BRACE,
    R_BRACE,
    LT,
    GT,
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    MINUS,
    PERCENT,
    PLUS,
    QUESTION,
    SLASH,
    STAR,
    TILDE,

    // Hard keywords.
    ABORT_KW,
    AND_KW,
    BOOL_KW,
    CONTAINS_KW,
    CONTINUE_KW,
    FALSE_KW,
    FLOAT_KW,
    HOURS_KW,
    INT_KW,
    LIST_KW,
    LOG_KW,
    MAX_INPUT_TOKENS_KW,
    MAX_TOKENS_KW,
    MINUTES_KW,
    NOTIFY_KW,
    NULL_KW,
    OR_KW,
    PROVIDER_KW,
    SECONDS_KW,
    STREETRACE_KW,
    STRING_KW,
    TEMPERATURE_KW,
    TOOL_CALL_KW,
    TOOL_RESULT_KW,
    TRUE_KW,

    // Soft keywords.
    AFTER_KW,
    AGENT_KW,
    AS_KW,
    ASSISTANT_KW,
    AUTH_KW,
    BACKOFF_KW,
    BASIC_KW,
    BEARER_KW,
    BLOCK_KW,
    BUILTIN_KW,
    CALL_KW,
    CATEGORY_KW,
    COMPACTION_KW,
    CREDIT_KW,
    DATA_KW,
    DEBIT_KW,
    DELEGATE_KW,
    DESCRIPTION_KW,
    DETECT_KW,
    DO_KW,
    DRIFT_KW,
    ELSE_KW,
    END_KW,
    ESCALATE_KW,
    EXPECTING_KW,
    EXPONENTIAL_KW,
    FAIL_KW,
    FAILURE_KW,
    FILTER_KW,
    FIXED_KW,
    FLOW_KW,
    FOR_KW,
    FROM_KW,
    GET_KW,
    GOAL_KW,
    HEADERS_KW,
    HISTORY_KW,
    HUMAN_KW,
    IF_KW,
    IMPORT_KW,
    IN_KW,
    INHERIT_KW,
    INITIAL_KW,
    INPUT_KW,
    INSTRUCTION_KW,
    ITEM_KW,
    ITEMS_KW,
    JAILBREAK_KW,
    LAST_KW,
    LINEAR_KW,
    LLM_KW,
    LOOP_KW,
    MASK_KW,
    MATCH_KW,
    MAX_KW,
    MCP_KW,
    MESSAGE_KW,
    MESSAGES_KW,
    MODEL_KW,
    NAME_KW,
    NOT_KW,
    ON_KW,
    OUTPUT_KW,
    PARALLEL_KW,
    PASSED_KW,
    PII_KW,
    POLICY_KW,
    PRESERVE_KW,
    PROCESS_KW,
    PRODUCES_KW,
    PROMPT_KW,
    PUSH_KW,
    REASON_KW,
    RESULT_KW,
    RESULTS_KW,
    RETRY_KW,
    RETURN_KW,
    RUN_KW,
    SCHEMA_KW,
    SCORE_KW,
    START_KW,
    STEP_KW,
    STRATEGY_KW,
    SUCCESS_KW,
    SYSTEM_KW,
    TIMEOUT_KW,
    TIMES_KW,
    TO_KW,
    TOOL_KW,
    TOOLS_KW,
    TRAJECTORY_KW,
    TRIGGER_KW,
    TYPE_KW,
    URGENCY_KW,
    URL_KW,
    USE_KW,
    USER_KW,
    USING_KW,
    WARN_KW,
    WHEN_KW,
    WHERE_KW,
    WITH_KW,

    // Zero-width tokens made by the indentation layer; never stored in the tree.
    INDENT,
    DEDENT,
    EOF,

    // Nodes.
    SOURCE_FILE,
    /// Tokens the parser could not place.
    ERROR,
    /// A definition's own name.
    NAME_DEF,
    /// A reference to a definition by name (agent, prompt, tool, model, ...).
    NAME_REF,
    VERSION_DECL,
    IMPORT,
    MODEL_DEF,
    MODEL_PROPERTY,
    SCHEMA_DEF,
    SCHEMA_FIELD,
    NAMED_TYPE,
    LIST_TYPE,
    OPTIONAL_TYPE,
    TOOL_DEF,
    TOOL_OPTION,
    TOOL_PROPERTY,
    HEADER_ENTRY,
    RETRY_POLICY_DEF,
    TIMEOUT_POLICY_DEF,
    POLICY_DEF,
    POLICY_PROPERTY,
    /// `executor NAME:` (our extension; `executor` is a contextual keyword).
    EXECUTOR_DEF,
    EXECUTOR_PROPERTY,
    PRESERVE_LIST,
    PRESERVE_ITEM,
    EVENT_HANDLER,
    FLOW_DEF,
    AGENT_DEF,
    AGENT_PROPERTY,
    NAME_LIST,
    TIME_SPAN,
    PROMPT_DEF,
    PROMPT_MODIFIER,
    PROMPT_BODY,
    ESCALATION_CLAUSE,
    /// An indented body of statements or properties.
    BLOCK,

    // Statements.
    ASSIGN_STMT,
    RUN_STMT,
    CALL_STMT,
    RETURN_STMT,
    FOR_STMT,
    PARALLEL_STMT,
    LOOP_STMT,
    MATCH_STMT,
    MATCH_ARM,
    IF_STMT,
    PUSH_STMT,
    ESCALATE_STMT,
    LOG_STMT,
    NOTIFY_STMT,
    EXPR_STMT,
    FAILURE_BLOCK,
    CONTINUE_STMT,
    /// `break` (our extension): leaves the innermost `loop` or `for`.
    BREAK_STMT,
    ABORT_STMT,
    RETRY_STEP_STMT,
    MASK_STMT,
    BLOCK_STMT,
    WARN_STMT,
    RETRY_WITH_STMT,
    /// `with EXPR` on `run` and `call llm`.
    WITH_CLAUSE,
    /// `history VAR` on `run agent`.
    HISTORY_CLAUSE,
    /// `using model "m"` on `call llm`.
    USING_CLAUSE,
    /// `, on escalate ACTION` on `run`.
    ON_ESCALATE,

    // Expressions.
    VAR,
    PROPERTY_EXPR,
    IMPLICIT_PROPERTY,
    LITERAL,
    INITIAL_PROMPT,
    LIST_EXPR,
    OBJECT_EXPR,
    OBJECT_ENTRY,
    PAREN_EXPR,
    PREFIX_EXPR,
    BIN_EXPR,
    FILTER_EXPR,
    CALL_EXPR,
    ARG_LIST,

    #[doc(hidden)]
    __LAST,
}

keywords! {
    ABORT_KW = "abort" hard,
    AND_KW = "and" hard,
    BOOL_KW = "bool" hard,
    CONTAINS_KW = "contains" hard,
    CONTINUE_KW = "continue" hard,
    FALSE_KW = "false" hard,
    FLOAT_KW = "float" hard,
    HOURS_KW = "hours" hard,
    INT_KW = "int" hard,
    LIST_KW = "list" hard,
    LOG_KW = "log" hard,
    MAX_INPUT_TOKENS_KW = "max_input_tokens" hard,
    MAX_TOKENS_KW = "max_tokens" hard,
    MINUTES_KW = "minutes" hard,
    NOTIFY_KW = "notify" hard,
    NULL_KW = "null" hard,
    OR_KW = "or" hard,
    PROVIDER_KW = "provider" hard,
    SECONDS_KW = "seconds" hard,
    STREETRACE_KW = "streetrace" hard,
    STRING_KW = "string" hard,
    TEMPERATURE_KW = "temperature" hard,
    TOOL_CALL_KW = "tool-call" hard,
    TOOL_RESULT_KW = "tool-result" hard,
    TRUE_KW = "true" hard,
    AFTER_KW = "after" soft,
    AGENT_KW = "agent" soft,
    AS_KW = "as" soft,
    ASSISTANT_KW = "assistant" soft,
    AUTH_KW = "auth" soft,
    BACKOFF_KW = "backoff" soft,
    BASIC_KW = "basic" soft,
    BEARER_KW = "bearer" soft,
    BLOCK_KW = "block" soft,
    BUILTIN_KW = "builtin" soft,
    CALL_KW = "call" soft,
    CATEGORY_KW = "category" soft,
    COMPACTION_KW = "compaction" soft,
    CREDIT_KW = "credit" soft,
    DATA_KW = "data" soft,
    DEBIT_KW = "debit" soft,
    DELEGATE_KW = "delegate" soft,
    DESCRIPTION_KW = "description" soft,
    DETECT_KW = "detect" soft,
    DO_KW = "do" soft,
    DRIFT_KW = "drift" soft,
    ELSE_KW = "else" soft,
    END_KW = "end" soft,
    ESCALATE_KW = "escalate" soft,
    EXPECTING_KW = "expecting" soft,
    EXPONENTIAL_KW = "exponential" soft,
    FAIL_KW = "fail" soft,
    FAILURE_KW = "failure" soft,
    FILTER_KW = "filter" soft,
    FIXED_KW = "fixed" soft,
    FLOW_KW = "flow" soft,
    FOR_KW = "for" soft,
    FROM_KW = "from" soft,
    GET_KW = "get" soft,
    GOAL_KW = "goal" soft,
    HEADERS_KW = "headers" soft,
    HISTORY_KW = "history" soft,
    HUMAN_KW = "human" soft,
    IF_KW = "if" soft,
    IMPORT_KW = "import" soft,
    IN_KW = "in" soft,
    INHERIT_KW = "inherit" soft,
    INITIAL_KW = "initial" soft,
    INPUT_KW = "input" soft,
    INSTRUCTION_KW = "instruction" soft,
    ITEM_KW = "item" soft,
    ITEMS_KW = "items" soft,
    JAILBREAK_KW = "jailbreak" soft,
    LAST_KW = "last" soft,
    LINEAR_KW = "linear" soft,
    LLM_KW = "llm" soft,
    LOOP_KW = "loop" soft,
    MASK_KW = "mask" soft,
    MATCH_KW = "match" soft,
    MAX_KW = "max" soft,
    MCP_KW = "mcp" soft,
    MESSAGE_KW = "message" soft,
    MESSAGES_KW = "messages" soft,
    MODEL_KW = "model" soft,
    NAME_KW = "name" soft,
    NOT_KW = "not" soft,
    ON_KW = "on" soft,
    OUTPUT_KW = "output" soft,
    PARALLEL_KW = "parallel" soft,
    PASSED_KW = "passed" soft,
    PII_KW = "pii" soft,
    POLICY_KW = "policy" soft,
    PRESERVE_KW = "preserve" soft,
    PROCESS_KW = "process" soft,
    PRODUCES_KW = "produces" soft,
    PROMPT_KW = "prompt" soft,
    PUSH_KW = "push" soft,
    REASON_KW = "reason" soft,
    RESULT_KW = "result" soft,
    RESULTS_KW = "results" soft,
    RETRY_KW = "retry" soft,
    RETURN_KW = "return" soft,
    RUN_KW = "run" soft,
    SCHEMA_KW = "schema" soft,
    SCORE_KW = "score" soft,
    START_KW = "start" soft,
    STEP_KW = "step" soft,
    STRATEGY_KW = "strategy" soft,
    SUCCESS_KW = "success" soft,
    SYSTEM_KW = "system" soft,
    TIMEOUT_KW = "timeout" soft,
    TIMES_KW = "times" soft,
    TO_KW = "to" soft,
    TOOL_KW = "tool" soft,
    TOOLS_KW = "tools" soft,
    TRAJECTORY_KW = "trajectory" soft,
    TRIGGER_KW = "trigger" soft,
    TYPE_KW = "type" soft,
    URGENCY_KW = "urgency" soft,
    URL_KW = "url" soft,
    USE_KW = "use" soft,
    USER_KW = "user" soft,
    USING_KW = "using" soft,
    WARN_KW = "warn" soft,
    WHEN_KW = "when" soft,
    WHERE_KW = "where" soft,
    WITH_KW = "with" soft,
}

impl SyntaxKind {
    pub fn is_trivia(self) -> bool {
        matches!(self, SyntaxKind::WHITESPACE | SyntaxKind::COMMENT)
    }

    pub fn is_keyword(self) -> bool {
        (SyntaxKind::ABORT_KW as u16..=SyntaxKind::WITH_KW as u16).contains(&(self as u16))
    }

    pub fn is_hard_keyword(self) -> bool {
        (SyntaxKind::ABORT_KW as u16..=SyntaxKind::TRUE_KW as u16).contains(&(self as u16))
    }

    pub fn is_soft_keyword(self) -> bool {
        (SyntaxKind::AFTER_KW as u16..=SyntaxKind::WITH_KW as u16).contains(&(self as u16))
    }

    pub fn is_punct(self) -> bool {
        (SyntaxKind::EQ2 as u16..=SyntaxKind::TILDE as u16).contains(&(self as u16))
    }

    /// Words the grammar accepts as an `identifier`: plain names and soft keywords.
    pub fn is_identifier(self) -> bool {
        self == SyntaxKind::NAME || self.is_soft_keyword()
    }

    pub fn is_node(self) -> bool {
        self as u16 >= SyntaxKind::SOURCE_FILE as u16
    }

    /// Text of a fixed token (keyword or punctuation), for messages.
    pub fn fixed_text(self) -> Option<&'static str> {
        use SyntaxKind::*;
        let punct = match self {
            EQ2 => "==",
            NEQ => "!=",
            ARROW => "->",
            GTEQ => ">=",
            LTEQ => "<=",
            COLON => ":",
            COMMA => ",",
            DOLLAR => "$",
            DOT => ".",
            EQ => "=",
            L_BRACE => "{",
            R_BRACE => "}",
            LT => "<",
            GT => ">",
            L_PAREN => "(",
            R_PAREN => ")",
            L_BRACK => "[",
            R_BRACK => "]",
            MINUS => "-",
            PERCENT => "%",
            PLUS => "+",
            QUESTION => "?",
            SLASH => "/",
            STAR => "*",
            TILDE => "~",
            _ => {
                return KEYWORDS.iter().find(|(_, k, _)| *k == self).map(|(t, _, _)| *t);
            }
        };
        Some(punct)
    }

    /// How the kind is named in "expected ..." messages.
    pub fn describe(self) -> String {
        use SyntaxKind::*;
        if let Some(text) = self.fixed_text() {
            return format!("`{text}`");
        }
        match self {
            NAME => "a name",
            DOTTED_NAME => "a dotted name",
            PROVIDER_MODEL => "a `provider/model` name",
            VERSION => "a version like `v1`",
            INT => "an integer",
            NUMBER => "a decimal number",
            STRING => "a string",
            INTERP_STRING => "an interpolated string",
            TRIPLE_STRING => "a triple-quoted string",
            MCP_URI => "an `mcp://` source",
            PIP_URI => "a `pip://` source",
            LOCAL_PATH => "a `./path.sr`",
            NEWLINE => "a line break",
            INDENT => "an indented block",
            DEDENT => "the end of the block",
            EOF => "the end of the file",
            _ => return format!("{self:?}"),
        }
        .to_string()
    }
}

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

/// Shorthand for token kinds: `T![=]`, `T![agent]`.
#[macro_export]
macro_rules! T {
    [==] => { $crate::SyntaxKind::EQ2 };
    [!=] => { $crate::SyntaxKind::NEQ };
    [->] => { $crate::SyntaxKind::ARROW };
    [>=] => { $crate::SyntaxKind::GTEQ };
    [<=] => { $crate::SyntaxKind::LTEQ };
    [:] => { $crate::SyntaxKind::COLON };
    [,] => { $crate::SyntaxKind::COMMA };
    [$] => { $crate::SyntaxKind::DOLLAR };
    [.] => { $crate::SyntaxKind::DOT };
    [=] => { $crate::SyntaxKind::EQ };
    ['{'] => { $crate::SyntaxKind::L_BRACE };
    ['}'] => { $crate::SyntaxKind::R_BRACE };
    [<] => { $crate::SyntaxKind::LT };
    [>] => { $crate::SyntaxKind::GT };
    ['('] => { $crate::SyntaxKind::L_PAREN };
    [')'] => { $crate::SyntaxKind::R_PAREN };
    ['['] => { $crate::SyntaxKind::L_BRACK };
    [']'] => { $crate::SyntaxKind::R_BRACK };
    [-] => { $crate::SyntaxKind::MINUS };
    [%] => { $crate::SyntaxKind::PERCENT };
    [+] => { $crate::SyntaxKind::PLUS };
    [?] => { $crate::SyntaxKind::QUESTION };
    [/] => { $crate::SyntaxKind::SLASH };
    [*] => { $crate::SyntaxKind::STAR };
    [~] => { $crate::SyntaxKind::TILDE };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_table_matches_upstream_counts() {
        let hard = KEYWORDS.iter().filter(|(_, _, hard)| *hard).count();
        let soft = KEYWORDS.iter().filter(|(_, _, hard)| !*hard).count();
        assert_eq!((hard, soft), (25, 102));
        for (text, kind, hard) in KEYWORDS {
            assert_eq!(SyntaxKind::from_keyword(text), Some(*kind));
            assert_eq!(kind.is_hard_keyword(), *hard, "{text}");
            assert_eq!(kind.is_soft_keyword(), !*hard, "{text}");
        }
    }
}
