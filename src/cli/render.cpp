#include "cli/render.hpp"

#include <board/codec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
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

}  // namespace

bool stdout_wants_colour() {
    const char* no_colour = std::getenv("NO_COLOR");
    if (no_colour && *no_colour) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string_view{term} == "dumb") return false;  // a terminal without escapes
    return ::isatty(STDOUT_FILENO) == 1;
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

std::string turn_of(const Catalog& catalog,
                    const CatalogEntry& entry,
                    const app::Standings* standings) {
    const TicketSummary& t = entry.ticket;
    if (standings) return standings->of(t).turn;
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

std::string entries_table(const app::Picked& picked, bool colour) {
    const Catalog& catalog = *picked.catalog;
    std::optional<app::Standings> standings;
    if (picked.policy) standings.emplace(catalog, *picked.policy, picked.now);
    Table table;
    table.header = {"ID", "STATUS", "TURN", "P", "TYPE", "TITLE"};
    table.rows.reserve(picked.entries.size());
    for (const auto* e : picked.entries) {
        const TicketSummary& t = e->ticket;
        const Status shown = catalog.shown_status(t);
        std::string turn = turn_of(catalog, *e, standings ? &*standings : nullptr);
        std::string title = t.title;
        if (!t.parent.empty()) title += fmt::format("  ({})", t.parent);
        std::string turn_colour = t.awaiting              ? "1;33"  // a human is needed
                                  : t.run                 ? "36"
                                  : turn == "blocked"     ? "31"
                                  : shown == Status::done ? "2"
                                  : turn != "agent"       ? "35"  // held: not the agent's turn
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

std::string import_report_text(const app::ImportReport& report, const Actor& by) {
    std::string out = fmt::format("{} {} tick(s) from {}\n",
                                  report.dry_run ? "Would import" : "Imported",
                                  report.imported.size(),
                                  report.source.string());
    for (const auto& i : report.imported)
        out += fmt::format("  {:<6} → {:<10} {:<32} {}\n", i.tick, i.id, i.status, i.title);
    if (!report.unmapped.empty()) {
        out += fmt::format("Not mapped ({}):\n", report.unmapped.size());
        for (const auto& u : report.unmapped)
            out += fmt::format("  {:<6} {}: {} ({})\n", u.tick, u.field, u.value, u.why);
    }
    std::string not_kept;
    for (const auto& field : report.fields_not_kept)
        not_kept += (not_kept.empty() ? "" : ", ") + field;
    out += fmt::format("Not kept for any tick: {} (the board has no owners; events are by {})\n",
                       not_kept,
                       to_string(by));
    return out;
}

std::string import_ticks_help() {
    return R"(Reads tk's .tick/issues/*.json and writes nothing under PATH. Each tick becomes a
ticket with the label tk:<tick id>; parents and blockers are created first.
  open                  → backlog (awaiting kept; manual: true → awaiting work)
  in_progress           → research (started by you: tk has one working state)
  closed                → done/completed (your approval, closed_reason as its note);
                          done/wont_do if tk's verdict was rejected (cancelled)
  notes                 → notes, [human] ones by you, others by the agent; tk's local
                          note times are read in this machine's time zone
  acceptance_criteria   → appended to the description
Reported, not imported: after, target_date, defer_until, external_ref, discovered_from,
role, base_branch, trace_id, unknown fields, a pending verdict, blockers or parents not in
the folder, a parent that is not an epic, links that would close a cycle. owner,
created_by and updated_at are not kept. Refused if a tk:<id> label is already on the board.

Examples:
  board import-ticks ../old-repo/.tick --dry-run
  board import-ticks ../old-repo
  board import-ticks ../old-repo/.tick --json | jq '.unmapped[]'
)";
}

}  // namespace board::cli
