// The Try page (src/tryView.ts): what `sr try --format json` answered, escaped,
// with the two command links the webview allows. `npm run test:unit`.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { render } from '../../out/test/tryView.js';

const prompt = {
  item: 'ask',
  kind: 'prompt',
  model: 'openai/gpt-4o-mini',
  message: '',
  rendered: 'Explain <b>borrowing</b> & lifetimes.',
  reply: 'Borrowing lends.',
  tool_calls: [],
  usage: { input_tokens: 12, output_tokens: 6, cost_usd: 0.000024 },
  status: 'completed',
  error: null,
  saved_case: null,
};

test('a prompt shows its rendered text, reply, tokens and cost, escaped', () => {
  assert.equal(
    render(prompt),
    [
      '<h3>prompt ask (openai/gpt-4o-mini)</h3>',
      '<pre>Explain &#60;b&#62;borrowing&#60;/b&#62; &#38; lifetimes.</pre>',
      '<h3>reply</h3>',
      '<pre>Borrowing lends.</pre>',
      '<p class="source">12 input + 6 output tokens, $0.000024</p>',
      '<p><a href="command:streetrace.saveTryCase">Save as eval case</a> · <a href="command:streetrace.editTryInputs">Edit inputs</a></p>',
    ].join('\n'),
  );
});

test('an agent shows its message and tool calls; a structured reply is JSON; a failure its error', () => {
  const agent = { ...prompt, kind: 'agent', item: 'writer', message: 'Write it', tool_calls: ['write_file'], reply: { ok: true } };
  const page = render(agent);
  assert.match(page, /<p class="source">message: Write it<\/p>/);
  assert.match(page, /<p class="source">tool calls: write_file<\/p>/);
  assert.match(page, /<pre>\{\n {2}&#34;ok&#34;: true\n\}<\/pre>/);
  const failed = render({ ...prompt, reply: null, status: 'failed', error: 'model said no', usage: { input_tokens: 0, output_tokens: 0 } });
  assert.match(failed, /<p class="error">model said no<\/p>/);
  assert.match(failed, /0 input \+ 0 output tokens<\/p>/);
});
