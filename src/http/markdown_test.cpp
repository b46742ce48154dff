// Tests markdown_html: GitHub's dialect, raw HTML as text, front matter left out, links and
// images limited to schemes a page may follow, bytes that are not UTF-8.

#include "http/markdown.hpp"

#include "support/utf8.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

using board::http::markdown_html;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return text;
}

/// Every value of the attribute `name` in `html`.
std::vector<std::string> values_of(const std::string& html, const std::string& name) {
    std::vector<std::string> out;
    const std::string opening = " " + name + "=\"";
    for (auto at = html.find(opening); at != std::string::npos; at = html.find(opening, at + 1)) {
        const auto begin = at + opening.size();
        out.push_back(html.substr(begin, html.find('"', begin) - begin));
    }
    return out;
}

}  // namespace

TEST_CASE("markdown: an ordered list is one <ol>, numbered by the browser", "[http][markdown]") {
    // Numbered as written or all "1.", as agents often write them: one list of four items.
    const std::string source = GENERATE(std::string{"1. one\n2. two\n3. three\n4. four\n"},
                                        std::string{"1. one\n1. two\n1. three\n1. four\n"},
                                        std::string{"1. one\n\n2. two\n\n3. three\n\n4. four\n"});
    CAPTURE(source);
    const std::string html = markdown_html(source);
    CAPTURE(html);
    CHECK(count(html, "<ol>") == 1);
    CHECK(count(html, "</ol>") == 1);
    CHECK(count(html, "<li>") == 4);
    CHECK(html.find("1.") == std::string::npos);
    CHECK(html.find("four") > html.find("three"));
}

TEST_CASE("markdown: a table with its alignment", "[http][markdown]") {
    const std::string html = markdown_html("| name | count |\n|:-----|------:|\n| a | 1 |\n");
    CAPTURE(html);
    CHECK(html.find("<table>") != std::string::npos);
    CHECK(html.find("<th align=\"left\">name</th>") != std::string::npos);
    CHECK(html.find("<td align=\"right\">1</td>") != std::string::npos);
}

TEST_CASE("markdown: a task list, strikethrough and a permissive autolink", "[http][markdown]") {
    const std::string html =
        markdown_html("- [x] done\n- [ ] to do\n\n~~gone~~ see www.example.com\n");
    CAPTURE(html);
    CHECK(count(html, "class=\"task-list-item\"") == 2);
    CHECK(count(html, " checked") == 1);
    CHECK(count(html, " disabled") == 2);
    CHECK(html.find("<del>gone</del>") != std::string::npos);
    CHECK(html.find("<a href=\"http://www.example.com\">www.example.com</a>") != std::string::npos);
}

TEST_CASE("markdown: a nested list", "[http][markdown]") {
    const std::string html = markdown_html("- a\n  - b\n    1. c\n    2. d\n- e\n");
    CAPTURE(html);
    CHECK(count(html, "<ul>") == 2);
    CHECK(count(html, "<ol>") == 1);
    // The inner lists are inside the first item, which closes before the last one opens.
    const auto inner = html.find("<ul>", html.find("<ul>") + 1);
    CHECK(html.find("<ol>") > inner);
    CHECK(html.find("</ol>") < html.find("</li>\n<li>e"));
}

TEST_CASE("markdown: raw HTML is shown as text, never passed through", "[http][markdown]") {
    const std::string html = markdown_html(
        "<script>alert(1)</script>\n\nhi <b onclick=\"x()\">there</b> <img src=x onerror=y>\n");
    CAPTURE(html);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    CHECK(html.find("<b") == std::string::npos);
    CHECK(html.find("<img") == std::string::npos);
    CHECK(html.find("&lt;b onclick=&quot;x()&quot;&gt;") != std::string::npos);
}

TEST_CASE("markdown: a link or image to another scheme goes nowhere", "[http][markdown]") {
    const std::string source = GENERATE(std::string{"[click](javascript:alert(1))"},
                                        std::string{"[click](JaVaScRiPt:alert(1))"},
                                        std::string{"[click](&#x6A;avascript&#58;alert(1))"},
                                        std::string{"[click](<javascript:alert(1)>)"},
                                        std::string{"<javascript:alert(1)>"},
                                        std::string{"[click](vbscript:msgbox)"},
                                        std::string{"[click](data:text/html,<script>x</script>)"},
                                        std::string{"![pic](data:image/svg+xml,<svg/onload=x>)"},
                                        std::string{"![pic](javascript:alert(1) \"title\")"},
                                        std::string{"[click][ref]\n\n[ref]: javascript:alert(1)"},
                                        std::string{"[![pic](javascript:x)](javascript:y)"});
    CAPTURE(source);
    const std::string html = markdown_html(source + "\n");
    CAPTURE(html);
    // The link stays, going nowhere; an image loads nothing. (The destination may still show
    // as text: an autolink's text is its address.)
    const auto hrefs = values_of(html, "href");
    const auto srcs = values_of(html, "src");
    CHECK(hrefs.size() + srcs.size() > 0);
    for (const auto& href : hrefs) CHECK(href == "#");
    for (const auto& src : srcs) CHECK(src.empty());
    CHECK(lower(html).find("<script") == std::string::npos);
}

TEST_CASE("markdown: http, https, mailto, relative and #fragment links are kept",
          "[http][markdown]") {
    const std::string html = markdown_html(
        "[a](https://example.com/x?a=1&b=2) [b](HTTP://example.com) [c](mailto:ana@example.com)\n"
        "[d](docs/http.md#api) [e](#top) [f](../up/a:b) [g](?q=1) <https://example.com/auto>\n"
        "![h](img/plot.png)\n");
    CAPTURE(html);
    CHECK(html.find("<a href=\"https://example.com/x?a=1&amp;b=2\">a</a>") != std::string::npos);
    CHECK(html.find("<a href=\"HTTP://example.com\">b</a>") != std::string::npos);
    CHECK(html.find("<a href=\"mailto:ana@example.com\">c</a>") != std::string::npos);
    CHECK(html.find("<a href=\"docs/http.md#api\">d</a>") != std::string::npos);
    CHECK(html.find("<a href=\"#top\">e</a>") != std::string::npos);
    CHECK(html.find("<a href=\"../up/a:b\">f</a>") != std::string::npos);
    CHECK(html.find("<a href=\"?q=1\">g</a>") != std::string::npos);
    CHECK(html.find("<a href=\"https://example.com/auto\">") != std::string::npos);
    CHECK(html.find("<img src=\"img/plot.png\" alt=\"h\">") != std::string::npos);
}

TEST_CASE("markdown: front matter at the very start is left out", "[http][markdown]") {
    CHECK(markdown_html("---\nstatus: complete\nsummary: done\n---\n# Findings\n") ==
          "<h1>Findings</h1>\n");
    CHECK(markdown_html("\xEF\xBB\xBF---\r\nstatus: complete\r\n...\r\nbody\r\n") ==
          "<p>body</p>\n");
    CHECK(markdown_html("---\n---\n") == "");
    // Not at the start, or never closed: not front matter, rendered as what it is.
    const std::string later = markdown_html("text\n\n---\nstatus: x\n---\n");
    CHECK(later.find("status: x") != std::string::npos);
    const std::string open = markdown_html("---\nstatus: x\n");
    CHECK(open.find("status: x") != std::string::npos);
    CHECK(open.find("<hr>") != std::string::npos);
}

TEST_CASE("markdown: bytes that are not UTF-8 become U+FFFD, nothing crashes", "[http][markdown]") {
    const std::string bad = std::string{"a\xff\xfe b **\xc3** [x](\xe2\x82) |\xf0|\n|-|\n"} +
                            std::string{"\0 nul\n", 6} + "\xed\xa0\x80 surrogate\n";
    const std::string html = markdown_html(bad);
    CAPTURE(html);
    CHECK(board::valid_utf8_prefix(html) == html.size());
    CHECK(html.find("\xEF\xBF\xBD") != std::string::npos);
    CHECK(html.find("nul") != std::string::npos);
    CHECK(markdown_html("").empty());
    // Truncated input of every length: a cut in the middle of any construct.
    const std::string whole =
        "---\na: b\n---\n# T\n| a | b |\n|---|---|\n| 1 | [l](https://x.y \"t\") |\n\n"
        "- [x] ![i](j.png)\n  1. `code` ~~s~~ <https://auto> &amp; &#0; &#x110000;\n";
    for (std::size_t n = 0; n <= whole.size(); ++n) {
        const std::string part = markdown_html(whole.substr(0, n));
        CHECK(board::valid_utf8_prefix(part) == part.size());
    }
}
