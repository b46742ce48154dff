#pragma once
// The daemon's eyes on the board: inotify on `tickets/` (a ticket folder appears or goes) and
// on each ticket folder (its log changed, appeared or went), turned into the set of tickets to
// read again. Hand edits, `cp` and `git checkout` are seen as well as the board's own writes.
// A log is named when its writer closes it (IN_CLOSE_WRITE), not at each write(): one read
// per write, and the board's own writers close only after their fdatasync, so what is read
// is on disk. A change made without a close (truncate(2), a writer holding the file open) is
// seen at the next poll. Without inotify the daemon polls instead (available() is false).

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace board::orchestrator {

class BoardWatcher {
public:
    /// `changed` is called on the io_context's thread when a batch of notifications named a
    /// ticket (or the kernel dropped some); `problem` with one sentence when a folder cannot
    /// be watched or notifications were dropped.
    BoardWatcher(boost::asio::io_context& io,
                 std::filesystem::path tickets_dir,
                 std::function<void()> changed,
                 std::function<void(const std::string&)> problem);
    ~BoardWatcher();
    BoardWatcher(const BoardWatcher&) = delete;
    BoardWatcher& operator=(const BoardWatcher&) = delete;

    /// Starts watching `tickets/`. Returns the reason when inotify is not available.
    std::optional<std::string> start();
    /// Also watches the folder of ticket `id` (its log).
    void watch(const std::string& id);

    bool available() const { return fd_ >= 0; }

    /// Reads every notification the kernel holds now, without waiting: each change finished
    /// before this call is then in take_changed().
    void drain();
    /// The tickets named since the last call.
    std::set<std::string> take_changed();

    /// Whether the kernel dropped notifications since the last call (its queue overflowed):
    /// then any log may have changed unseen, and only a look at every one is sure.
    bool take_overflow() { return std::exchange(overflowed_, false); }

    /// Ticket folders inotify could not watch (its limit of watches reached): their logs
    /// must be looked at by their identity instead.
    const std::set<std::string>& unwatched() const { return unwatched_; }

    bool has_changed() const { return !changed_ids_.empty() || overflowed_; }

    /// Marks `id` to be read again (the daemon's own doubt, e.g. a write that lost a race).
    void mark(const std::string& id) { changed_ids_.insert(id); }

    void stop();

private:
    boost::asio::awaitable<void> read_notifications();
    void note(std::string_view events);

    boost::asio::io_context& io_;
    std::filesystem::path tickets_dir_;
    std::function<void()> changed_;
    std::function<void(const std::string&)> problem_;
    std::optional<boost::asio::posix::stream_descriptor> stream_;
    int fd_ = -1;
    int board_watch_ = -1;
    std::map<int, std::string> watched_;
    std::set<std::string> changed_ids_;
    std::set<std::string> unwatched_;
    bool overflowed_ = false;
    bool told_unwatched_ = false;  ///< the first folder not watched is reported, not each
    bool told_overflow_ = false;   ///< and the first overflow
};

}  // namespace board::orchestrator
