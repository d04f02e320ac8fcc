// HTML escaping, apart from the webviews so that unit tests load it without `vscode`.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
