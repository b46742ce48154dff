// Markdown to HTML with md4c's own renderer (md4c-html), its output checked on the way out.

#include "http/markdown.hpp"

#include "support/utf8.hpp"

#include <algorithm>
#include <limits>
#include <md4c-html.h>

namespace board::http {
namespace {

/// The bytes of the front matter at the start of `text`, its closing line included; 0 when
/// there is none. The fences are parse_front_matter's (board/artifact.hpp), so what the page
/// shows as fields is exactly what is left out here: a first line `---`, a closing `---` or
/// `...`, trailing blanks allowed; an opening with no closing line is not front matter.
std::size_t front_matter_size(std::string_view text) {
    std::size_t pos = 0;
    bool opened = false;
    while (pos < text.size()) {
        const auto end = text.find('\n', pos);
        const std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
        auto line = text.substr(pos, (end == std::string_view::npos ? text.size() : end) - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
        if (!opened) {
            if (line != "---") return 0;
            opened = true;
        } else if (line == "---" || line == "...") {
            return next;
        }
        pos = next;
    }
    return 0;
}

/// Whether a link's destination, as md4c-html wrote it (percent-encoded, `&` as `&amp;`), is
/// one a page may follow: http, https or mailto, or no scheme at all (a relative path, a
/// `?query`, a `#fragment`). A scheme is what comes before a `:` that precedes any `/`, `?`
/// or `#`, which is how a browser reads it too.
bool followable(std::string_view destination) {
    const auto stop = destination.find_first_of(":/?#");
    if (stop == std::string_view::npos || destination[stop] != ':') return true;
    std::string scheme{destination.substr(0, stop)};
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return scheme == "http" || scheme == "https" || scheme == "mailto";
}

/// What md4c-html writes, with each link's and image's destination held back until it is
/// whole and then checked. md4c-html has no hook for destinations, and taking md4c's parser
/// callbacks instead would mean a second HTML renderer to keep right; its output, though, is
/// regular: a destination is written right after the chunk `<a href="` or `<img src="` and
/// ends at the next chunk, which begins with `"` (a quote inside a destination is written
/// as %22, and text never holds a bare `<`). Checking what was written is also checking
/// what a browser will read, entities and escapes already applied.
struct Rendering {
    enum class In { text, link, image };
    std::string html;
    std::string destination;
    In in = In::text;
    bool failed = false;  ///< out of memory: nothing more is written
};

void take_output(const MD_CHAR* data, MD_SIZE size, void* userdata) noexcept {
    auto& out = *static_cast<Rendering*>(userdata);
    if (out.failed) return;
    // md4c is C: an exception must not unwind through it.
    try {
        const std::string_view chunk{data, size};
        if (out.in != Rendering::In::text) {
            if (!chunk.starts_with('"')) {
                out.destination += chunk;
                return;
            }
            // Refused: a link goes nowhere (`#`); an image loads nothing (an empty src
            // requests nothing, where `#` would fetch the page itself).
            if (followable(out.destination))
                out.html += out.destination;
            else if (out.in == Rendering::In::link)
                out.html += '#';
            out.destination.clear();
            out.in = Rendering::In::text;
        }
        out.html += chunk;
        if (chunk == "<a href=\"")
            out.in = Rendering::In::link;
        else if (chunk == "<img src=\"")
            out.in = Rendering::In::image;
    } catch (...) {
        out.failed = true;
    }
}

}  // namespace

std::string markdown_html(std::string_view source) noexcept {
    try {
        if (source.substr(0, 3) == "\xEF\xBB\xBF") source.remove_prefix(3);  // a BOM
        source.remove_prefix(front_matter_size(source));
        // md4c reads bytes and copies what it does not understand as is: repaired first, the
        // fragment is valid UTF-8 too (a JSON string can carry it).
        const std::string text = repair_utf8(source);
        const auto size = static_cast<MD_SIZE>(
            std::min<std::size_t>(text.size(), std::numeric_limits<MD_SIZE>::max()));
        Rendering out;
        out.html.reserve(text.size() + text.size() / 4);
        const int failed =
            md_html(text.data(), size, take_output, &out, MD_DIALECT_GITHUB | MD_FLAG_NOHTML, 0);
        if (failed != 0 || out.failed) return {};
        return std::move(out.html);
    } catch (...) {
        return {};
    }
}

}  // namespace board::http
