#pragma once
// What the daemon knows of each ticket: the fold of its log (without the bulk a plan does not
// need), the identity of the log it came from, and what the daemon itself holds against it (its
// own last write, a debounce after a person's change). A board holds thousands of tickets, so
// no EventLog stays open: a log whose identity (inode, size, ctime) is unchanged is not read
// again unless inotify named it.

#include "orchestrator/reporter.hpp"
#include "support/files.hpp"

#include <board/app.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

class KnownTickets {
public:
    using Clock = std::chrono::steady_clock;

    struct Entry {
        explicit Entry(std::filesystem::path ticket_dir)
            : dir(std::move(ticket_dir)) {}

        std::filesystem::path dir;
        FileStamp stamp;                       ///< of its log when it was read
        std::shared_ptr<const Ticket> ticket;  ///< null: not readable now (or not created yet)
        std::int64_t own_seq = -1;             ///< the seq of the daemon's last write; -1 none
        Clock::time_point available_at{};      ///< no run before (a person just changed it)
        bool ran_this_session = false;
        int own_writes_in_flight = 0;  ///< the daemon's writes on their way to this log
        /// While writes of the daemon's own to this log overlap: the seq known when the first
        /// of them began (-1: none known), and the seqs they appended. Any other seq after it
        /// is another writer's.
        std::optional<std::int64_t> judged_after;
        std::vector<std::int64_t> own_appended;
        bool reloaded_in_flight = false;  ///< read while a write of its own was on its way
        std::string problem;              ///< the last load error, printed once per change
    };

    struct IdOrder {
        bool operator()(const std::string& a, const std::string& b) const;
    };

    using Map = std::map<std::string, Entry, IdOrder>;

    /// `changed(id, before, after)` is called for every change of what is known of a ticket
    /// (either may be null); `first_seen(id)` for every ticket that gets an entry.
    KnownTickets(std::filesystem::path tickets_dir,
                 Reporter& reporter,
                 std::chrono::milliseconds debounce,
                 std::function<void(const std::string&, const Ticket*, const Ticket*)> changed,
                 std::function<void(const std::string&)> first_seen);

    Entry& entry(const std::string& id);
    /// Every ticket folder of the board, each log read again unless unchanged.
    void scan();
    /// Reads `id`'s log again unless its identity is unchanged; `notified`: inotify named it, so
    /// it is read even then (an edit in place within one clock tick keeps the identity).
    void reload(const std::string& id, bool notified);
    /// Another writer (a person, a script) just changed `id`: no run of it before the dust
    /// settles (daemon.debounce).
    void changed_by_others(const std::string& id);
    /// Records `ticket` (the fold of the log, e.g. after the daemon's own write) as what is
    /// known of `id`; null when it cannot be read.
    void set(const std::string& id, std::shared_ptr<const Ticket> ticket);

    /// Every ticket known, and what holds those an agent would otherwise take (the same words
    /// `board show` and the page give, from `live`), for the daemon's view and summary.
    BoardSnapshot snapshot(app::LiveBoard& live, const Policy& policy) const;

    Map& all() { return map_; }

private:
    std::filesystem::path tickets_dir_;
    Reporter& reporter_;
    std::chrono::milliseconds debounce_;
    std::function<void(const std::string&, const Ticket*, const Ticket*)> changed_;
    std::function<void(const std::string&)> first_seen_;
    bool scanned_once_ = false;  ///< the first scan() is over: what appears now is new
    Map map_;
};

}  // namespace board::orchestrator
