// Building and finding the page's elements. Everything is made with createElement and text nodes,
// never innerHTML, so text from the service can never become markup.

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: Array<Node | string | undefined>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== undefined) node.append(child);
  return node;
}

export const present = <T>(...items: Array<T | undefined>): T[] => items.filter((item): item is T => item !== undefined);

/** Text whose `backticked` words (field names in the API's descriptions) show as code. */
export function withCode(text: string): Array<Node | string> {
  return text.split('`').map((part, i) => (i % 2 === 1 ? element('code', {}, part) : part));
}
