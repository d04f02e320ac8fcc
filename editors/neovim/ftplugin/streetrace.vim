" StreetRace: comments and four-space indentation (tabs count as four columns).
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=#\ %s comments=:# expandtab shiftwidth=4 softtabstop=4 tabstop=4
setlocal iskeyword=@,48-57,_,192-255,-

let b:undo_ftplugin = 'setlocal commentstring< comments< expandtab< shiftwidth< softtabstop< tabstop< iskeyword<'
