" StreetRace indentation: one level after a line ending in `:` or `do` and
" after `match`; `end` goes back to the column of the block it closes.
if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal indentexpr=StreetraceIndent(v:lnum) indentkeys+=0=end
let b:undo_indent = 'setlocal indentexpr< indentkeys<'

if exists('*StreetraceIndent')
  finish
endif

" The line without its comment (a `#` outside quotes starts one).
function! s:Code(lnum) abort
  return substitute(getline(a:lnum), '^\%([^#"'']\|"[^"]*"\|''[^'']*''\)*\zs#.*$', '', '')
endfunction

function! s:Opens(lnum) abort
  let code = s:Code(a:lnum)
  return code =~# '\<do\s*$' || code =~# '^\s*match\>'
endfunction

function! StreetraceIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  if getline(a:lnum) =~# '^\s*end\>'
    " The opener of this `end`: skip blocks closed in between.
    let depth = 0
    let lnum = prev
    while lnum > 0
      if getline(lnum) =~# '^\s*end\>'
        let depth += 1
      elseif s:Opens(lnum)
        if depth == 0
          return indent(lnum)
        endif
        let depth -= 1
      endif
      let lnum = prevnonblank(lnum - 1)
    endwhile
    return 0
  endif
  let code = s:Code(prev)
  return indent(prev) + (s:Opens(prev) || code =~# ':\s*$' ? shiftwidth() : 0)
endfunction
