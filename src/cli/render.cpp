#include "cli/render.hpp"

#include "catalog/in_halves.hpp"

#include <board/codec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

namespace board::cli {
namespace {

/// Display width of UTF-8 text, counting code points (good enough for ids, words and most
/// titles; wide CJK glyphs are rare in the padded columns).
std::size_t display_width(std::string_view text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

void append_string_list(std::string& out, const std::vector<std::string>& items) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        append_json_string(out, items[i]);
    }
    out += ']';
}

void append_key(std::string& out, std::string_view key) {
    out += ",\"";
    out += key;
    out += "\":";
}

}  // namespace

bool stdout_wants_colour() {
    const char* no_colour = std::getenv("NO_COLOR");
    if (no_colour && *no_colour) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string_view{term} == "dumb") return false;  // a terminal without escapes
    return ::isatty(STDOUT_FILENO) == 1;
}

void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    // Runs of plain characters are appended whole: a push_back per character was half of
    // `list --json` once the catalog loaded fast.
    const auto plain = [](char c) {
        return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
    };
    while (!text.empty()) {
        std::size_t run = 0;
        while (run < text.size() && plain(text[run])) ++run;
        out.append(text.data(), run);
        text.remove_prefix(run);
        if (text.empty()) break;
        const char c = text.front();
        text.remove_prefix(1);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    fmt::format_to(std::back_inserter(out),
                                   "\\u{:04x}",
                                   static_cast<unsigned>(static_cast<unsigned char>(c)));
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

namespace {

/// Decimal integers and `true`/`false` appended as fmt's "{}" writes them, without a format
/// string parsed per field (fmt::format_to into a std::string was a third of `list --json`).
/// Maps a fresh buffer's pages in one call instead of one page fault per 4 KiB as it is
/// written: `list --json` on 10,000 tickets writes 4 MB, a thousand faults, and on a virtual
/// machine each fault is a trap. Best effort: a kernel without MADV_POPULATE_WRITE (before
/// 5.14) refuses and the pages fault in as before.
void populate(char* data, std::size_t bytes) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
    if (end <= begin + 16 * page) return;  // small: not worth a system call
#ifdef MADV_POPULATE_WRITE
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#endif
}

void append_field(std::string& out, std::string_view key, long long value) {
    out += key;
    const fmt::format_int text{value};
    out.append(text.data(), text.size());
}

void append_timestamp_field(std::string& out, std::string_view key, UnixMillis at) {
    out += key;
    out += '"';
    out += format_timestamp(at);
    out += '"';
}

}  // namespace

void append_entry_json(std::string& out, const Catalog& catalog, const CatalogEntry& entry) {
    const Ticket& t = entry.ticket;
    out += "{\"id\":";
    append_json_string(out, t.id);
    append_key(out, "title");
    append_json_string(out, t.title);
    append_key(out, "type");
    append_json_string(out, to_string(t.type));
    append_field(out, ",\"priority\":", t.priority);
    append_key(out, "labels");
    append_string_list(out, t.labels);
    append_key(out, "parent");
    append_json_string(out, t.parent);
    append_key(out, "blocked_by");
    append_string_list(out, t.blocked_by);
    const Status shown = catalog.shown_status(t);
    append_key(out, "status");
    append_json_string(out, to_string(shown));
    if (t.resolution) {
        append_key(out, "resolution");
        append_json_string(out, to_string(*t.resolution));
    }
    if (t.awaiting) {
        append_key(out, "awaiting");
        append_json_string(out, to_string(*t.awaiting));
        append_key(out, "handoff");
        append_json_string(out, to_string(t.handoff));
    }
    if (t.requires_) {
        append_key(out, "requires");
        append_json_string(out, to_string(*t.requires_));
    }
    if (t.run) {
        append_key(out, "run");
        out += "{\"id\":";
        append_json_string(out, t.run->id);
        out += ",\"phase\":\"";
        out += to_string(t.run->phase);
        out += '"';
        append_timestamp_field(out, ",\"started_at\":", t.run->started_at);
        out += '}';
    }
    const bool blocked = !catalog.blockers_done(t);
    out += blocked ? ",\"blocked\":true" : ",\"blocked\":false";
    append_field(out, ",\"phase_attempts\":", t.phase_attempts);
    append_field(out, ",\"phase_iterations\":", t.phase_iterations);
    // A double as fmt's "{}" writes it (shortest round trip), into a stack buffer.
    std::array<char, 48> number{};
    const auto written = fmt::format_to_n(number.data(), number.size(), "{}", t.cost_usd);
    out += ",\"cost_usd\":";
    out.append(number.data(), std::min(written.size, number.size()));
    append_field(out, ",\"runs_total\":", t.runs_total);
    append_field(out, ",\"notes_count\":", entry.notes);
    append_field(out, ",\"questions_pending\":", entry.questions_pending);
    if (t.type == TicketType::epic) {
        const EpicProgress progress = catalog.epic_progress(t.id);
        append_field(out, ",\"children\":", progress.children);
        append_field(out, ",\"children_done\":", progress.done);
    }
    append_timestamp_field(out, ",\"created_at\":", t.created_at);
    append_timestamp_field(out, ",\"updated_at\":", t.updated_at);
    append_field(out, ",\"seq\":", t.seq);
    out += '}';
}

std::string entries_json(const Catalog& catalog, const std::vector<const CatalogEntry*>& entries) {
    // Room for a typical entry (board_gen's average is 430 bytes), so the buffers are mapped
    // once and the two halves join without a reallocation.
    constexpr std::size_t json_bytes_per_entry = 512;
    const auto render_range = [&](std::string& out, std::size_t from, std::size_t to) {
        if (out.empty()) {
            out.reserve((to - from) * json_bytes_per_entry + 4);
            populate(out.data(), out.capacity());
        }
        for (std::size_t i = from; i < to; ++i) {
            if (i > 0) out += ',';
            append_entry_json(out, catalog, *entries[i]);
        }
    };
    // A big board's JSON is written in two halves at once (the catalog is only read): on
    // 10,000 tickets it is a fifth of a `board list --json`.
    std::string out;
    out.reserve(entries.size() * json_bytes_per_entry + 4);
    populate(out.data(), out.capacity());
    out += '[';
    std::string second;
    in_halves(entries.size(), [&](std::size_t from, std::size_t to) {
        render_range(from == 0 ? out : second, from, to);
    });
    out += second;
    out += "]\n";
    return out;
}

namespace {

bool shown_as_is(std::string_view text, std::size_t i, bool keep_newlines) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') return keep_newlines;
    if (c < 0x20 || c == 0x7f) return false;
    // U+0080..U+009F in UTF-8: C2 80..C2 9F.
    return !(c == 0xC2 && i + 1 < text.size() &&
             (static_cast<unsigned char>(text[i + 1]) & 0xE0) == 0x80);
}

std::size_t first_unprintable(std::string_view text, bool keep_newlines) {
    std::size_t i = 0;
    while (i < text.size() && shown_as_is(text, i, keep_newlines)) ++i;
    return i;
}

/// `cell` itself, or its printable() form kept in `scratch`: a table of 10,000 rows copies
/// nothing for the cells that need no escaping (all of them, nearly always).
const std::string& shown_cell(const std::string& cell, std::string& scratch) {
    if (first_unprintable(cell, false) == cell.size()) return cell;
    scratch = printable(cell);
    return scratch;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
    std::size_t i = first_unprintable(text, keep_newlines);
    if (i == text.size()) return std::string{text};

    std::string out{text.substr(0, i)};
    for (; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (shown_as_is(text, i, keep_newlines)) {
            out += text[i];
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == 0xC2) {
            fmt::format_to(
                std::back_inserter(out), "\\u{:04x}", static_cast<unsigned char>(text[++i]));
        } else {
            fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
        }
    }
    return out;
}

std::string printable_block(std::string_view text, std::string_view indent) {
    std::string out = printable(text, true);
    for (auto at = out.find('\n'); at != std::string::npos; at = out.find('\n', at + 1))
        out.insert(at + 1, indent);
    return out;
}

std::string render(const Table& table, bool colour) {
    const std::size_t columns = table.header.size();
    std::vector<std::size_t> widths(columns, 0);
    std::string scratch;
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < columns && c < row.size(); ++c)
            widths[c] = std::max(widths[c], display_width(shown_cell(row[c], scratch)));
    };
    measure(table.header);
    for (const auto& row : table.rows) measure(row);

    std::string out;
    auto emit = [&](const std::vector<std::string>& row, const std::vector<std::string>* codes) {
        for (std::size_t c = 0; c < columns && c < row.size(); ++c) {
            const std::string& cell = shown_cell(row[c], scratch);
            const bool last = c + 1 == columns;
            const std::string* code =
                codes && c < codes->size() && !(*codes)[c].empty() ? &(*codes)[c] : nullptr;
            if (colour && code) fmt::format_to(std::back_inserter(out), "\x1b[{}m", *code);
            out += cell;
            if (colour && code) out += "\x1b[0m";
            if (!last) out.append(widths[c] - display_width(cell) + 2, ' ');
        }
        out += '\n';
    };
    const std::vector<std::string> bold(columns, "1");
    emit(table.header, &bold);
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        emit(table.rows[r], r < table.colours.size() ? &table.colours[r] : nullptr);
    return out;
}

std::string turn_of(const Catalog& catalog, const CatalogEntry& entry) {
    const Ticket& t = entry.ticket;
    if (catalog.shown_status(t) == Status::done) return "-";
    if (t.awaiting) return std::string{to_string(*t.awaiting)};
    if (t.run) return "running";
    if (t.type == TicketType::epic) {
        const EpicProgress p = catalog.epic_progress(t.id);
        return fmt::format("{}/{} done", p.done, p.children);
    }
    if (!catalog.blockers_done(t)) return "blocked";
    return "agent";
}

std::string entries_table(const Catalog& catalog,
                          const std::vector<const CatalogEntry*>& entries,
                          bool colour) {
    Table table;
    table.header = {"ID", "STATUS", "TURN", "P", "TYPE", "TITLE"};
    table.rows.reserve(entries.size());
    for (const auto* e : entries) {
        const Ticket& t = e->ticket;
        const Status shown = catalog.shown_status(t);
        std::string turn = turn_of(catalog, *e);
        std::string title = t.title;
        if (!t.parent.empty()) title += fmt::format("  ({})", t.parent);
        std::string turn_colour = t.awaiting              ? "1;33"  // a human is needed
                                  : t.run                 ? "36"
                                  : turn == "blocked"     ? "31"
                                  : shown == Status::done ? "2"
                                                          : "";
        const std::string row_colour = shown == Status::done ? "2" : "";
        table.rows.push_back({t.id,
                              std::string{to_string(shown)},
                              std::move(turn),
                              std::to_string(t.priority),
                              std::string{to_string(t.type)},
                              std::move(title)});
        table.colours.push_back(
            {row_colour, row_colour, std::move(turn_colour), row_colour, row_colour, row_colour});
    }
    return render(table, colour);
}

}  // namespace board::cli
