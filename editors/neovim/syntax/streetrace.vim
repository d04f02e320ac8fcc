" StreetRace (.sr) syntax. Hard keywords everywhere; soft keywords only in
" the positions the grammar gives them (see shared/design/language.md §1.2).
if exists('b:current_syntax')
  finish
endif

syn iskeyword @,48-57,_,192-255,-
syn case match

" Hard keywords.
syn keyword streetraceBoolean true false null
syn keyword streetraceType string int float bool list
syn keyword streetraceOperator and or contains
syn keyword streetraceUnit seconds minutes hours
syn keyword streetraceEvent tool-call tool-result
syn keyword streetraceProperty provider temperature max_tokens max_input_tokens
syn keyword streetraceStatement log notify continue abort

" Declarations at the start of a line, and the name they define.
syn match streetraceVersion /^streetrace\s\+v\d\+\%(\.\d\+\)\=\>/
syn match streetraceInclude /^import\>/
syn match streetraceInclude /\%(^import\s\+\h[[:alnum:]_-]*\s\+\)\@<=from\>/
syn match streetraceDeclaration /^\%(model\|schema\|tool\|prompt\|flow\|policy\|retry\|timeout\)\>/ nextgroup=streetraceDefinition skipwhite
syn match streetraceDeclaration /^agent\>/ nextgroup=streetraceDefinition skipwhite
syn match streetraceDefinition /\h[[:alnum:]_-]*/ contained

" Statements and clauses.
syn match streetraceConditional /^\s*\zs\%(if\|match\|when\|else\)\>/
syn match streetraceRepeat /^\s*\zs\%(for\|loop\|parallel\)\>/
syn match streetraceKeyword /^\s*\zs\%(on\|after\)\ze\s\+\S\+\s\+do\>/
syn match streetraceKeyword /^\s*\zson\ze\s\+failure\s*:/
syn match streetraceEvent /\%(^\s*\%(on\|after\)\s\+\)\@<=\%(start\|input\|output\)\ze\s\+do\>/
syn match streetraceKeyword /\<do\ze\s*\%(#.*\)\=$/
syn match streetraceKeyword /^\s*\zsend\>/
syn match streetraceStatement /\%(^\s*\|->\s*\|:\s\+\)\zs\%(return\|push\|escalate\|mask\|block\|warn\)\>/
syn match streetraceStatement /^\s*\zsretry\ze\s\+\%(step\|with\)\>/
syn match streetraceKeyword /\<\%(run\s\+agent\|run\|call\s\+llm\)\>/
syn match streetraceKeyword /\<\%(with\|history\|using\s\+model\|expecting\|inherit\|in\|max\|where\|filter\|not\)\>/
syn match streetraceKeyword /\<\%(times\|backoff\|to\s\+human\|on\s\+escalate\|escalate\s\+if\|auth\s\+\%(bearer\|basic\)\|mcp\|builtin\)\>/
syn match streetraceKeyword /\<as\ze\s\+\h[[:alnum:]_-]*\s\+to\>/
syn match streetraceKeyword /\<to\ze\s\+\$\=\h[[:alnum:]_-]*\s*\%(#.*\)\=$/
syn match streetraceBuiltin /\<initial\s\+user\s\+prompt\>/
syn match streetraceBuiltin /\<process\ze\s\+\%(\%(and\|or\|contains\)\>\)\@![$"'(\[[:alnum:]_]/
syn match streetraceKeyword /\<\%(exponential\|linear\|fixed\)\ze\s\+backoff\>/
syn match streetraceKeyword /\<last\ze\s\+\d\+\s\+messages\>/
syn match streetraceKeyword /\%(\<last\s\+\d\+\s\+\)\@<=messages\>/
syn match streetraceKeyword /\<tool\s\+results\>/
syn match streetraceProperty /^\s\+\zs\%(tools\|instruction\|prompt\|produces\|description\|delegate\|use\|history\|retry\|timeout\)\>/
syn match streetraceField /^\s\+\zs\h[[:alnum:]_-]*\ze\s*:\%(\s\|$\)/

" Values.
syn match streetraceVariable /\$\h[[:alnum:]_-]*\%(\.\h[[:alnum:]_-]*\)*/
syn match streetraceModelId /\<\a[[:alnum:]_-]*\/\a[[:alnum:]_.-]*/
syn match streetraceNumber /\<\d\+\%(\.\d\+\)\=\>/
syn match streetraceOperator /==\|!=\|<=\|>=\|->\|[<>~=+*\/%-]/

" Strings have no escapes; `${…}` interpolates in every kind.
syn region streetraceString start=/"""/ end=/"""/ contains=streetraceInterpolation,@Spell
syn region streetraceString start=/'''/ end=/'''/ contains=streetraceInterpolation,@Spell
syn region streetraceString start=/"\%(""\)\@!/ end=/"/ contains=streetraceInterpolation
syn region streetraceString start=/'\%(''\)\@!/ end=/'/ contains=streetraceInterpolation
syn region streetraceInterpolation matchgroup=streetraceInterpolationDelimiter start=/\${/ end=/}/ contained contains=streetraceVariable,streetraceEnv
syn match streetraceEnv /\<env:\h\w*/ contained

syn match streetraceComment /#.*$/ contains=@Spell

hi def link streetraceBoolean Boolean
hi def link streetraceType Type
hi def link streetraceOperator Operator
hi def link streetraceUnit Keyword
hi def link streetraceEvent Constant
hi def link streetraceProperty Keyword
hi def link streetraceStatement Statement
hi def link streetraceVersion PreProc
hi def link streetraceInclude Include
hi def link streetraceDeclaration Structure
hi def link streetraceDefinition Function
hi def link streetraceConditional Conditional
hi def link streetraceRepeat Repeat
hi def link streetraceKeyword Keyword
hi def link streetraceBuiltin Identifier
hi def link streetraceField Identifier
hi def link streetraceVariable Identifier
hi def link streetraceModelId Constant
hi def link streetraceNumber Number
hi def link streetraceString String
hi def link streetraceInterpolation Identifier
hi def link streetraceInterpolationDelimiter Special
hi def link streetraceEnv Special
hi def link streetraceComment Comment

let b:current_syntax = 'streetrace'
