#pragma once
// The catalog: a whole board loaded for board-wide queries (spec/state-machine.md §7,
// spec/cli.md `list`, `next`, `ready`, `questions`).
//
// Two parts:
// - Catalog (pure): tickets in memory and the §7 queries over them. Decisions come from
//   next_action(), queue_key() and comes_before() of next_action.hpp; nothing here restates
//   a rule of the reducer.
// - load_catalog (I/O): every ticket's folded state. The logs are the truth; one cache,
//   `tickets/.index`, saves folding them all on every load and is never believed over them.
//   It holds one line per ticket: the identity of its log when the line was made (inode,
//   size, ctime) and the fields queries need. A line is used only while its log's identity is
//   unchanged and the log was last changed before the index was written (so an edit in the
//   same clock tick is never missed); else the log is folded. Every load stats every log, so
//   an append, an editor's save, a `cp`, `rsync` or `git checkout` over a log shows in the
//   very next query. Text, tab-separated, so `cat` shows it; delete it at will.
//   `ticket.json` snapshots are written for people and tools; no query reads them.
//
// A ticket whose log cannot be read (corrupt, newer schema) is left out with a warning: one
// bad file never hides the rest of the board.

#include <board/next_action.hpp>
#include <board/ticket.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace board {

/// One ticket as board-wide queries see it.
struct CatalogEntry {
    /// The folded ticket's summary; `show` reads the ticket itself for the rest. `run` keeps
    /// id, phase and start.
    TicketSummary ticket;
    int questions_pending = 0;
    int questions_total = 0;
    int notes = 0;
    friend bool operator==(const CatalogEntry&, const CatalogEntry&) = default;
};

/// `ticket` without its bulk, and the counts that replace it.
CatalogEntry summarize(const Ticket& ticket);

/// How many of an epic's children are done.
struct EpicProgress {
    int children = 0;
    int done = 0;
    /// §7: an epic is done when all its children are (derived, not stored), or when it was
    /// closed itself (cancelled). An epic without children is not done.
    bool complete = false;
};

/// Which tickets `list` shows. Empty or false members do not filter.
struct ListFilter {
    std::vector<Status> statuses;     ///< any of these; done ones only if named or `all`
    bool awaiting_any = false;        ///< awaiting set, of any type
    std::vector<Awaiting> awaiting;   ///< awaiting one of these types
    std::string parent;               ///< children of this epic
    bool standalone = false;          ///< no parent
    bool orphan = false;              ///< parent done (or unknown)
    std::vector<std::string> labels;  ///< has every one of these labels
    bool all = false;                 ///< include done tickets
};

/// Narrows `next` and `ready` (spec/cli.md `next [EPIC] [--standalone] [--orphan]`).
struct NextFilter {
    std::string epic;  ///< only this epic's children
    bool standalone = false;
    bool orphan = false;
};

/// The tickets of a board in memory, in id order, and the §7 queries over them. Pure: no
/// clock, no disk. Queries return pointers into entries(), valid while the Catalog lives
/// (moving it keeps them valid; it cannot be copied).
class Catalog {
public:
    Catalog() = default;
    explicit Catalog(std::vector<CatalogEntry> entries);
    /// The catalog moved from is left empty.
    Catalog(Catalog&& other) noexcept;
    Catalog& operator=(Catalog&& other) noexcept;
    Catalog(const Catalog&) = delete;
    Catalog& operator=(const Catalog&) = delete;

    /// In id order (id_less).
    const std::vector<CatalogEntry>& entries() const { return entries_; }

    /// Puts `entry` in place of the ticket with its id, as if the catalog were built again
    /// with it (for a caller that follows a board as it changes, e.g. the daemon). False, and
    /// nothing changed, when that id is not in the catalog: adding a ticket means building
    /// anew. Pointers from earlier queries stay valid but may show the new state.
    bool replace(CatalogEntry entry);

    const CatalogEntry* find(std::string_view id) const;

    /// The ticket's status for people: an epic's derived completion shows it `done`.
    Status shown_status(const TicketSummary& ticket) const;
    EpicProgress epic_progress(std::string_view epic_id) const;
    /// How the ticket relates to its epic (§7 order): none, in_flight, open, or done (an
    /// orphan; a parent that is not on the board counts as done).
    EpicState epic_state(const TicketSummary& ticket) const;
    /// What next_action() needs of the rest of the board for `ticket`. A `blocked_by` id
    /// that is not on the board counts as not done: nothing runs past a blocker nobody can see.
    BoardFacts facts_for(const TicketSummary& ticket) const;

    /// How many tickets each column holds and how many runs are in flight in each, for the
    /// whole board (`blockers_done` left true); kept, not counted on each call.
    BoardFacts column_facts() const { return columns_; }

    /// Every `blocked_by` ticket is done (one not on the board is not).
    bool blockers_done(const TicketSummary& ticket) const;

    /// Tickets matching `filter`, in `next` order (comes_before).
    std::vector<const CatalogEntry*> list(const ListFilter& filter) const;
    /// Every ticket the agent could take now: next_action() says StartRun, in `next` order.
    std::vector<const CatalogEntry*> ready(const Policy& policy, const NextFilter& filter) const;
    /// ready() one at a time, for a caller that wants only the first few: `take` is called
    /// with each in `next` order until it returns false (a heap, not a sort of them all).
    void take_ready(const Policy& policy,
                    const NextFilter& filter,
                    const std::function<bool(const CatalogEntry&)>& take) const;
    /// The first of ready(), or nullptr.
    const CatalogEntry* next_for_agent(const Policy& policy, const NextFilter& filter) const;
    /// Human side: the first ticket with `awaiting` set (of one of `types`, any if empty),
    /// whatever its status, in the same order; nullptr if none.
    const CatalogEntry* next_for_human(std::span<const Awaiting> types,
                                       const NextFilter& filter) const;
    /// Every ticket awaiting a human, as next_for_human orders them.
    std::vector<const CatalogEntry*> awaiting_human(std::span<const Awaiting> types,
                                                    const NextFilter& filter) const;

    /// Why `ticket_id` may not be blocked by `blockers`, or nullopt: an id that is not a
    /// ticket id or not on the board, the ticket itself, or a cycle (named in full, e.g.
    /// `PROJ-3 → PROJ-5 → PROJ-3`). `ticket_id` may be a ticket not created yet.
    std::optional<std::string> blocked_by_error(std::string_view ticket_id,
                                                std::span<const std::string> blockers) const;
    /// Why `id` names no epic on this board, or nullopt: not a ticket id, no such ticket, or
    /// a ticket of another type.
    std::optional<std::string> epic_error(std::string_view id) const;
    /// Why `parent` may not be `ticket_id`'s parent, or nullopt (empty = no parent): not on
    /// the board, not an epic, the ticket itself, or an epic inside `ticket_id` (a cycle).
    std::optional<std::string> parent_error(std::string_view ticket_id,
                                            std::string_view parent) const;

private:
    /// What a ticket's epic_state() needs of its parent, in one lookup.
    struct EpicFacts {
        EpicProgress progress;
        bool on_board = false;       ///< the parent is a ticket of this catalog
        int children_in_flight = 0;  ///< children with a run
    };

    struct TextHash {
        using is_transparent = void;

        std::size_t operator()(std::string_view text) const {
            return std::hash<std::string_view>{}(text);
        }
    };

    void clear() noexcept;
    bool matches(const CatalogEntry& entry, const NextFilter& filter) const;
    /// The counts from entries_, in the same pass as a check of their id order when
    /// `check_order`: false, with nothing counted, when they are out of order.
    bool count_all(bool check_order);
    /// Adds (`sign` 1) or takes away (-1) what `entry` counts for: its column, its run's
    /// column, its parent's children.
    void count(const CatalogEntry& entry, int sign);
    /// `epic_id`'s completion and presence again, from its children's counts and its own
    /// entry; forgotten when no ticket names it any more.
    void settle(std::string_view epic_id);
    void settle(std::string_view epic_id, EpicFacts& facts) const;
    /// The tickets next_action() would start now, in id order.
    std::vector<const CatalogEntry*> pick_ready(const Policy& policy,
                                                const NextFilter& filter) const;
    std::vector<std::pair<QueueKey, const CatalogEntry*>> keyed_by_queue(
        const std::vector<const CatalogEntry*>& picked) const;
    std::vector<const CatalogEntry*> in_next_order(std::vector<const CatalogEntry*> picked) const;

    std::vector<CatalogEntry> entries_;
    // Kept as entries change (replace() costs a few lookups, not a pass over the board): the
    // daemon asks after every change of a ticket.
    BoardFacts columns_;  ///< column_facts()
    std::unordered_map<std::string, EpicFacts, TextHash, std::equal_to<>>
        epics_;  ///< by every parent a ticket names
};

// ---------------------------------------------------------------------------------------------
// Loading from disk

/// The index file's name inside `tickets/`.
inline constexpr std::string_view index_file_name = ".index";
/// The snapshot's name inside a ticket folder.
inline constexpr std::string_view snapshot_file_name = "ticket.json";

struct CatalogLoad {
    Catalog catalog;
    std::vector<std::string> warnings;  ///< tickets left out and why, one line each
    int rebuilt = 0;                    ///< index lines rebuilt from a fold of the log on this load
};

struct CatalogError {
    std::string message;  ///< names the path and the cause
};

/// Loads every ticket of the board at `board_root`, refreshing stale caches. Errors only
/// when `tickets/` cannot be read at all; a bad ticket is a warning.
std::variant<CatalogLoad, CatalogError> load_catalog(const std::filesystem::path& board_root);

/// Writes `ticket_dir/ticket.json` atomically (temp file + rename, no fsync: a cache for
/// people and tools; `board verify` checks it against the fold). Returns an error message, or
/// nullopt.
std::optional<std::string> write_snapshot(const std::filesystem::path& ticket_dir,
                                          const Ticket& ticket);

}  // namespace board
