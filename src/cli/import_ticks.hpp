#pragma once
// `board import-ticks PATH`: a `.tick/` folder of `tk` (ticks) becomes tickets on this board,
// one per tick, each with a log that reproduces the tick's state (research/peers-ticks.md §1.2
// and §1.3 describe the format: one JSON object per tick in `.tick/issues/<id>.json`).
//
// Contract:
// - The source is only read: nothing under PATH is written, renamed or touched.
// - Every tick file is parsed and every ticket's events are folded through reduce() before
//   anything is written. A malformed tick file, or an event the reducer refuses, stops the
//   import with one message naming the file (and line or field) or the tick: nothing written.
// - Each ticket's events are appended with one durable append per ticket (append_events, as
//   `board fork` does) after its id is claimed with allocate_ticket_id, in an order where a
//   parent and every blocker exist before the tickets that name them.
// - Whatever a tick holds that the board cannot say is reported (tick id, field, value, why),
//   never dropped silently. The original tick id is kept as the label `tk:<id>`; an import
//   that finds any of those labels already on the board is refused (exit 1), so running it
//   twice never makes duplicates.

#include <board/ticket.hpp>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace board::cli {

/// Where the import runs and how it reports.
struct Context {
    std::filesystem::path board;
    Actor by;
    bool json = false;
};

/// What to print and the exit code (0 done, 1 refused, 2 usage, 3 storage).
struct CommandOutcome {
    int exit_code = 0;
    std::string output;                 ///< for stdout
    std::string message;                ///< one line for stderr: what and why
    std::vector<std::string> warnings;  ///< for stderr
};

/// tk's fields every tick has that the board does not keep: reported once, not per tick.
inline constexpr std::array<std::string_view, 3> tick_fields_not_kept{
    "owner", "created_by", "updated_at"};

/// One note line of a tick's `notes` string (`YYYY-MM-DD HH:MM - [human] text`).
struct TickNote {
    bool human = false;  ///< the `[human] ` prefix: written with `--from human` or by a verdict
    std::string text;    ///< without the stamp and the prefix; continuation lines kept
    /// The stamp as written (local wall-clock time, no zone), counted as if it were UTC;
    /// nullopt for text before the first stamped line.
    std::optional<UnixMillis> wall;
    friend bool operator==(const TickNote&, const TickNote&) = default;
};

/// A field or value of a tick the board has no place for.
struct Unmapped {
    std::string tick;   ///< the tick's id
    std::string field;  ///< e.g. `after`, `blocked_by`, `unknown field x`
    std::string value;  ///< the value as JSON text
    std::string why;
    friend bool operator==(const Unmapped&, const Unmapped&) = default;
};

/// The fields of a tick the import reads. Strings are empty and optionals absent when the
/// file leaves them out (or writes null).
struct Tick {
    std::string id;
    std::string title;
    std::string description;
    std::string acceptance_criteria;
    std::string status;  ///< open, in_progress or closed
    int priority = 2;
    TicketType type = TicketType::task;
    std::vector<std::string> labels;
    std::string parent;
    std::vector<std::string> blocked_by;
    bool manual = false;
    std::optional<Awaiting> requires_;
    std::optional<Awaiting> awaiting;
    std::string verdict;  ///< approved, rejected or empty
    std::vector<TickNote> notes;
    UnixMillis created_at = 0;
    std::optional<UnixMillis> started_at;
    std::optional<UnixMillis> closed_at;
    std::string closed_reason;
    /// Fields present with a value the board does not keep (`after`, `external_ref`, unknown
    /// keys...), in file order.
    std::vector<Unmapped> unmapped;
};

/// Parses a tick file's text. `file` names the file in errors. Errors (one line each, the
/// file first, then the line for JSON syntax or the field for a bad value): not JSON, not an
/// object, a required field missing (id, title, status, priority, type, created_at), a value
/// of the wrong type or outside tk's enums.
std::variant<Tick, std::string> parse_tick(std::string_view json, std::string_view file);

/// Splits tk's `notes` string into notes: a line starting `YYYY-MM-DD HH:MM - ` starts a note,
/// any other line continues the one before (multi-line feedback, `--edit`).
std::vector<TickNote> parse_tick_notes(std::string_view notes);

/// RFC 3339 as Go writes time.Time (`2026-01-15T10:30:00.123456789Z`, or `...+02:00`), to
/// UTC milliseconds. nullopt if malformed.
std::optional<UnixMillis> parse_rfc3339(std::string_view text);

struct ImportTicksRequest {
    std::filesystem::path source;  ///< the `.tick` folder, or the folder that holds it
    bool dry_run = false;          ///< parse, check and report; write nothing
};

/// Imports every tick of `request.source`. Output: the report (N imported, the id mapping,
/// each unmapped field with its tick id), as JSON with `ctx.json`. Exit codes: 0 done;
/// 1 refused (malformed tick, an event the reducer refuses, already imported, run from
/// inside an agent run); 2 PATH holds no `.tick/issues`; 3 storage (board unwritable: the
/// report says which ticks were imported before it stopped).
CommandOutcome import_ticks(const Context& ctx, const ImportTicksRequest& request);

/// The `--help` footer: what maps to what, and an example.
std::string import_ticks_help();

}  // namespace board::cli
