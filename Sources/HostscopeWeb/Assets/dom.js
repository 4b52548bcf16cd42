// Every node of the page is made here. Strings become text nodes or attribute values, never markup:
// remote text (host names, command lines, error sentences, span attributes) cannot turn into elements.

/** An element with properties and children; `text` sets textContent, `on*` adds listeners. */
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value == null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Sets a node's text only when it changed, so an unchanged cell costs no layout. */
export function setText(node, text) {
  const value = text == null ? '' : String(text);
  if (node.textContent !== value) node.textContent = value;
}

/** A link to a screen of the page (a hash route); the parts are percent-encoded. */
export function route(...parts) {
  return '#/' + parts.map((part) => encodeURIComponent(part)).join('/');
}

/** Starts a download of `text` (a string or a Blob) as a file named `name`. */
export function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = el('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
