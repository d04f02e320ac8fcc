// Writing a Try's inputs file (`ITEM.inputs.yaml`, a YAML map that `sr try`
// and the Neovim plugin read too) from the values typed in the Try page: each
// value a double-quoted YAML string, the rest of the file as it was. Apart
// from `vscode` so that unit tests run it.

/** `value` as a YAML double-quoted scalar: every character that is not plainly printable escaped. */
export function yamlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') {
      out += `\\${ch}`;
    } else if (ch === '\n') {
      out += '\\n';
    } else if (ch === '\t') {
      out += '\\t';
    } else if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      out += `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate has no UTF-8 form: written as the replacement character, as a UTF-8 encoder does.
      out += '\uFFFD';
    } else if (code === 0x2028 || code === 0x2029 || code === 0xfeff || code === 0xfffe || code === 0xffff) {
      // Line and paragraph separators break lines in YAML 1.1 readers; the others are not printable.
      out += `\\u${code.toString(16).toUpperCase()}`;
    } else {
      out += ch;
    }
  }
  return `${out}"`;
}

/** A key as YAML reads it back as that string: plain when it is a name no YAML reader takes for something else. */
export function yamlKey(name: string): string {
  const special = /^(true|false|null|yes|no|on|off|y|n)$/i;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !special.test(name) ? name : yamlString(name);
}

/** Why a file cannot be edited line by line, or undefined. */
function notPlainMap(lines: string[]): string | undefined {
  let key = false;
  for (const [index, line] of lines.entries()) {
    if (line === '' || /^[ \t]/.test(line) || line.startsWith('#')) {
      continue;
    }
    if (line === '---' && !key) {
      continue;
    }
    if (/^-(\s|$)/.test(line) && key) {
      continue; // a sequence under the key above, at the key's indentation
    }
    if (/^("[^"\\]*"|'[^']*'|[^\s#\-?{[\]}!&*|>'"%@`,][^]*?)[ \t]*:(\s|$)/.test(line)) {
      key = true;
      continue;
    }
    return `line ${index + 1} is not a \`name: value\` line of a map`;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * `text` (an inputs file's, empty when there is none) with each of `values`
 * set: a key already in the file has its line (and the indented lines of its
 * value) replaced, a new key is added at the end; other keys, comments and
 * blank lines stay as they were. Throws when the file is not a map written
 * one `name: value` per line (a flow map, several documents), which only a
 * person should edit.
 */
export function setInputs(text: string, values: ReadonlyMap<string, string>): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  // The line after the last end of line is '' (a file ending in a newline) or the last line's text.
  const endsWithNewline = lines.length > 0 && lines[lines.length - 1] === '';
  if (endsWithNewline) {
    lines.pop();
  }
  const why = notPlainMap(lines);
  if (why !== undefined) {
    throw new Error(`${why}: edit the file itself`);
  }
  const added: string[] = [];
  for (const [name, value] of values) {
    const entry = `${yamlKey(name)}: ${yamlString(value)}`;
    const pattern = new RegExp(`^(${escapeRegExp(name)}|"${escapeRegExp(name)}"|'${escapeRegExp(name)}')[ \\t]*:(\\s|$)`);
    const start = lines.findIndex((line) => pattern.test(line));
    if (start < 0) {
      added.push(entry);
      continue;
    }
    let end = start + 1;
    while (end < lines.length && (lines[end] === '' || /^[ \t]/.test(lines[end]) || /^-(\s|$)/.test(lines[end]))) {
      end++;
    }
    while (end > start + 1 && lines[end - 1].trim() === '') {
      end--; // blank lines after the value stay
    }
    lines.splice(start, end - start, entry);
  }
  const all = [...lines, ...added];
  return all.length === 0 ? '' : all.join(eol) + eol;
}
