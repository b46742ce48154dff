#pragma once
// `tickets/.index`: the board-wide cache of catalog entries (see include/board/catalog.hpp).
//
// Format, version 5: a first line `board-index 5<TAB>CHECKED`, CHECKED a time (ns since the
// epoch) every change after the logs were statted is stamped at or after, then one line per
// ticket in id order, fields separated by tabs, in this order:
//   id, log inode, log size, log ctime (ns), seq, title, type, priority, labels, parent,
//   blocked_by, status, resolution, awaiting, handoff, requires, run id, run phase,
//   run started_at, phase_attempts, phase_iterations, phase_started_at, last_failure_at,
//   cost_usd, runs_total, created_at, updated_at, questions_pending, questions_total, notes,
//   awaiting_since, reminders, reminded_at, escalated_at, escalated_to, branch, ship_owed
// Enums use their wire spellings, absent optionals are empty, lists are joined with `,`,
// flags are `0` or `1`;
// inside a field `\`, tab, newline, CR and `,` are written `\\`, `\t`, `\n`, `\r`, `\,`.
// A line that does not parse is ignored (its ticket is folded from its log). An index of
// another version is rebuilt whole.

#include <board/catalog.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace board::catalog_index {

inline constexpr std::string_view header_prefix = "board-index 5\t";

/// The identity of a log file when its index line was made. An append changes the size; a
/// replaced file changes the inode; any write changes the ctime, which (unlike the mtime) no
/// tool can set back: `cp -p`, `rsync -t` and `touch -d` keep an mtime, never a ctime.
struct LogIdentity {
    std::uint64_t inode = 0;
    std::uint64_t size = 0;
    std::int64_t ctime_ns = 0;
    friend bool operator==(const LogIdentity&, const LogIdentity&) = default;
};

struct IndexLine {
    LogIdentity log;
    CatalogEntry entry;
};

/// Appends one line (with its `\n`) for `line` to `out`.
void append_line(std::string& out, const IndexLine& line);

/// Parses one line (without its `\n`); nullopt if it is malformed in any way.
std::optional<IndexLine> parse_line(std::string_view text);

/// The same, into `log` and a default-constructed `entry` (no temporary Ticket to move on a
/// big board). False if malformed; `entry` is then unspecified.
bool parse_line_into(std::string_view text, LogIdentity& log, CatalogEntry& entry);

}  // namespace board::catalog_index
