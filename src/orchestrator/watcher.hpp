#pragma once
// The daemon's eyes on the board: inotify on `tickets/` (a ticket folder appears or goes) and
// on each ticket folder (its log changed, appeared or went), turned into the set of tickets to
// read again. Hand edits,
// `cp` and `git checkout` are seen as well as the board's own writes. Without inotify the
// daemon polls instead (available() is false).

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

namespace board::orchestrator {

class BoardWatcher {
public:
    /// `changed` is called on the io_context's thread when a batch of notifications named a
    /// ticket.
    BoardWatcher(boost::asio::io_context& io,
                 std::filesystem::path tickets_dir,
                 std::function<void()> changed);
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

    bool has_changed() const { return !changed_ids_.empty(); }

    /// Marks `id` to be read again (the daemon's own doubt, e.g. a write that lost a race).
    void mark(const std::string& id) { changed_ids_.insert(id); }

    void stop();

private:
    boost::asio::awaitable<void> read_notifications();
    void note(std::string_view events);

    boost::asio::io_context& io_;
    std::filesystem::path tickets_dir_;
    std::function<void()> changed_;
    std::optional<boost::asio::posix::stream_descriptor> stream_;
    int fd_ = -1;
    int board_watch_ = -1;
    std::map<int, std::string> watched_;
    std::set<std::string> changed_ids_;
};

}  // namespace board::orchestrator
