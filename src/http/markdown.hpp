#pragma once
// Markdown to an HTML fragment on the server, with md4c: what the page and an artifact's
// `?html=1` show, so every reader gets the same rendering of the same text.

#include <string>
#include <string_view>

namespace board::http {

/// `source` as an HTML fragment: GitHub's dialect (tables, task lists, strikethrough,
/// permissive autolinks). Raw HTML is shown as text, never passed through; a YAML front
/// matter block at the very start is left out (the page shows it as fields); a link or image
/// whose destination is not http:, https:, mailto:, a relative path or a `#fragment` gets a
/// harmless one instead. Bytes that are not UTF-8 become U+FFFD. Never throws.
std::string markdown_html(std::string_view source) noexcept;

}  // namespace board::http
