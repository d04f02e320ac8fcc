" StreetRace agent files.
autocmd BufRead,BufNewFile *.sr setfiletype streetrace
