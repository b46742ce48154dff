#pragma once
// Output for people and for scripts: aligned tables (colour only when asked for), and the
// JSON summary of a catalog entry that `list`, `ready` and `next --awaiting` print.

#include <board/app.hpp>
#include <board/catalog.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace board::cli {

/// Colour on stdout: only on a terminal, and never when NO_COLOR is set (no-color.org).
bool stdout_wants_colour();

/// `text` safe to print on a terminal: control characters (C0, DEL, and C1 such as U+009B,
/// which some terminals read as an escape) are shown as `\n`, `\t`, `\x1b`, `\u009b`, so
/// a title or note written by anyone (an agent included) can neither move the cursor, colour
/// the screen nor break a table row. `keep_newlines` lets multi-line text (notes,
/// descriptions) keep its lines; returns `text` unchanged when nothing needs showing.
std::string printable(std::string_view text, bool keep_newlines = false);

/// Multi-line text under a heading: printable(text, true) with every line after the first
/// starting with `indent`.
std::string printable_block(std::string_view text, std::string_view indent);

/// A table: a header row and rows of cells, every column but the last padded to its widest
/// cell. `colours[row][column]` (may be shorter or empty) is an ANSI SGR code such as "33"
/// applied to that cell when `colour` is true.
struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::vector<std::string>> colours;
};

std::string render(const Table& table, bool colour);

/// The ID/STATUS/TURN/P/TYPE/TITLE table of what a query picked, as `list` and `ready` print
/// it. TURN is the entry's standing (`agent`, `wip 2/2`, `manual`, an awaiting kind).
std::string entries_table(const app::Picked& picked, bool colour);

/// An import's report as `board import-ticks` prints it: what maps to what, what the board
/// could not say, and who the events are by.
std::string import_report_text(const app::ImportReport& report, const Actor& by);

/// The `import-ticks --help` footer: what maps to what, and an example.
std::string import_ticks_help();

/// Whose turn it is, in one word: the standing's turn when `standings` is given, else (no
/// board.yaml to explain it by) the awaiting type, `running`, `blocked`, `agent`, or `-`.
std::string turn_of(const Catalog& catalog,
                    const CatalogEntry& entry,
                    const app::Standings* standings);

}  // namespace board::cli
