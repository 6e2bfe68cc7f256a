// Roleplay Markdown for the play page: *actions* in italics, **bold**, "quoted speech"
// highlighted, lists, quotes, code, links. Parsing is markdown-it's (static/vendor/,
// html: false, so raw HTML in a message is text); the DOM is built here from its tokens with
// createElement and text nodes only, from a fixed set of elements and attributes. No string of
// a message's text is ever parsed as HTML (no innerHTML), so a reply cannot bring a <script>,
// an event handler or a style: there is nothing to sanitise afterwards. Links keep only
// http(s) and mailto addresses and open with rel="noopener nofollow".
//
// The same function renders stored messages on load and a streaming reply after each delta
// (a reply is a few kilobytes: parsing it again per delta costs well under a millisecond).

import markdownit from "../vendor/markdown-it/markdown-it.min.js";

const md = markdownit("default", { html: false, linkify: false, breaks: true, typographer: false });
// Indented code blocks and underlined ("setext") headings turn ordinary roleplay prose into
// code or headings by accident (an indented paragraph, a line above a "---" scene break).
md.disable(["code", "lheading"]);

// The elements a message may contain; any other tag a token names becomes a <span>.
const ELEMENTS = new Set([
  "p", "br", "em", "strong", "s", "code", "pre", "blockquote", "ul", "ol", "li", "hr",
  "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a",
]);
const LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
// Quoted speech: "straight", “curly” and «guillemets»; a straight quote opens or closes.
const QUOTES = /["“”«»]/;
const CLOSING = { "“": "”", "«": "»", '"': '"' };

function element(tag) {
  return document.createElement(ELEMENTS.has(tag) ? tag : "span");
}

function safeHref(href) {
  try {
    const url = new URL(href, document.baseURI);
    return LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch (error) {
    return null;
  }
}

function link(href) {
  const target = safeHref(href || "");
  if (!target) return document.createElement("span");
  const a = document.createElement("a");
  a.href = target;
  a.rel = "noopener nofollow";
  a.target = "_blank";
  return a;
}

/** Inline content of one block: a stack of open elements, with quoted speech as one more
 * element that may open and close across emphasis (`"Hello *there*"`). */
class Inline {
  constructor(parent) {
    this.stack = [parent];
    this.quote = null; // the closing mark of the open quote, if one is open
  }

  get top() {
    return this.stack[this.stack.length - 1];
  }

  open(el) {
    this.top.append(el);
    this.stack.push(el);
  }

  /** Close the innermost element `match` accepts; elements opened inside it are closed
   * with it and opened again after it, so badly nested marks still render. */
  close(match) {
    const index = this.stack.findLastIndex((el, i) => i > 0 && match(el));
    if (index < 0) return;
    const reopen = this.stack.splice(index).slice(1);
    for (const el of reopen) this.open(el.cloneNode(false));
  }

  text(content) {
    let rest = content;
    while (rest) {
      const at = rest.search(QUOTES);
      if (at < 0) break;
      const mark = rest[at];
      if (at) this.top.append(rest.slice(0, at));
      if (this.quote !== null && mark === this.quote) {
        this.top.append(mark);
        this.close((el) => el.classList.contains("speech"));
        this.quote = null;
      } else if (this.quote === null && CLOSING[mark]) {
        const speech = document.createElement("span");
        speech.className = "speech";
        this.open(speech);
        this.top.append(mark);
        this.quote = CLOSING[mark];
      } else {
        this.top.append(mark);
      }
      rest = rest.slice(at + 1);
    }
    if (rest) this.top.append(rest);
  }

  token(token) {
    switch (token.type) {
      case "text":
        this.text(token.content);
        break;
      case "softbreak":
      case "hardbreak":
        // The "\n" keeps the text's line breaks in textContent; it renders as nothing.
        this.top.append(document.createElement("br"), "\n");
        break;
      case "code_inline": {
        const code = document.createElement("code");
        code.textContent = token.content;
        this.top.append(code);
        break;
      }
      case "link_open":
        this.open(link(token.attrGet("href")));
        break;
      case "image": {
        // Never loaded: its description, linked to where it is.
        const a = link(token.attrGet("src"));
        a.textContent = token.content || "image";
        this.top.append(a);
        break;
      }
      default:
        if (token.nesting === 1) this.open(element(token.tag));
        else if (token.nesting === -1) this.close((el) => el.localName === (ELEMENTS.has(token.tag) ? token.tag : "span"));
        else if (token.content) this.text(token.content);
    }
  }
}

/** `source` (a message's raw text) as a fragment of safe elements. */
export function render(source) {
  const root = document.createDocumentFragment();
  const stack = [root];
  const top = () => stack[stack.length - 1];
  for (const token of md.parse(source, {})) {
    if (token.type === "inline") {
      const inline = new Inline(top());
      for (const child of token.children || []) inline.token(child);
    } else if (token.type === "fence" || token.type === "code_block") {
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = token.content;
      pre.append(code);
      top().append(pre);
    } else if (token.nesting === 1) {
      if (token.hidden) {
        stack.push(top()); // a tight list's paragraph: its text goes in the item itself
        continue;
      }
      const el = element(token.tag);
      const start = token.attrGet("start");
      if (token.tag === "ol" && start && /^\d{1,9}$/.test(start)) el.start = Number(start);
      top().append(el);
      stack.push(el);
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (token.type === "hr") {
      top().append(document.createElement("hr"));
    } else if (token.content) {
      top().append(token.content);
    }
  }
  return root;
}
