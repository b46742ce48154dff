#include "orchestrator/watcher.hpp"

#include <board/board_dir.hpp>
#include <board/event_log.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <sys/inotify.h>
#include <unistd.h>
#include <vector>

namespace board::orchestrator {

namespace asio = boost::asio;

BoardWatcher::BoardWatcher(asio::io_context& io,
                           std::filesystem::path tickets_dir,
                           std::function<void()> changed,
                           std::function<void(const std::string&)> problem)
    : io_(io)
    , tickets_dir_(std::move(tickets_dir))
    , changed_(std::move(changed))
    , problem_(std::move(problem)) {}

BoardWatcher::~BoardWatcher() {
    stop();
}

std::optional<std::string> BoardWatcher::start() {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) return std::strerror(errno);
    board_watch_ =
        ::inotify_add_watch(fd_,
                            tickets_dir_.c_str(),
                            IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR);
    stream_.emplace(io_, fd_);  // owns the descriptor from here on
    asio::co_spawn(io_, read_notifications(), asio::detached);
    return std::nullopt;
}

void BoardWatcher::watch(const std::string& id) {
    if (fd_ < 0) return;
    const int watch =
        ::inotify_add_watch(fd_,
                            (tickets_dir_ / id).c_str(),
                            IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM);
    if (watch >= 0) {
        watched_[watch] = id;
        unwatched_.erase(id);
        return;
    }
    // A folder removed since it was named is watched again when it is made again.
    if (errno == ENOENT || errno == ENOTDIR) {
        unwatched_.erase(id);
        return;
    }
    const int error = errno;
    unwatched_.insert(id);
    if (std::exchange(told_unwatched_, true)) return;
    problem_(
        fmt::format("cannot watch {} for changes ({}{}): its log, and any other not "
                    "watched, is looked at by its identity instead",
                    (tickets_dir_ / id).string(),
                    std::strerror(error),
                    error == ENOSPC ? "; raise fs.inotify.max_user_watches" : ""));
}

std::set<std::string> BoardWatcher::take_changed() {
    std::set<std::string> out;
    out.swap(changed_ids_);
    return out;
}

void BoardWatcher::drain() {
    if (fd_ < 0) return;
    alignas(inotify_event) char buffer[64 * 1024];
    for (;;) {
        const auto n = ::read(fd_, buffer, sizeof buffer);
        if (n <= 0) return;  // EAGAIN: nothing more is pending
        note({buffer, static_cast<std::size_t>(n)});
    }
}

void BoardWatcher::stop() {
    if (stream_) stream_->close();
    stream_.reset();
    fd_ = -1;
}

asio::awaitable<void> BoardWatcher::read_notifications() {
    std::vector<char> buffer(64 * 1024);
    for (;;) {
        if (!stream_) co_return;
        auto [ec, n] = co_await stream_->async_read_some(asio::buffer(buffer),
                                                         asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;
        note({buffer.data(), n});
        if (has_changed()) changed_();
    }
}

// Not inside the coroutine: inotify_event ends in a flexible array member.
void BoardWatcher::note(std::string_view events) {
    std::size_t off = 0;
    while (off + sizeof(inotify_event) <= events.size()) {
        inotify_event header;
        std::memcpy(&header, events.data() + off, sizeof header);
        const char* name_start = events.data() + off + sizeof header;
        const std::string_view name{name_start, ::strnlen(name_start, header.len)};
        off += sizeof header + header.len;
        if ((header.mask & IN_Q_OVERFLOW) != 0) {
            overflowed_ = true;
            if (!std::exchange(told_overflow_, true))
                problem_(
                    "inotify dropped notifications (its queue was full): every log is "
                    "looked at again (said once, however often it happens)");
        } else if ((header.mask & IN_IGNORED) != 0) {
            watched_.erase(header.wd);  // its folder went, and the watch with it
        } else if (header.wd == board_watch_) {
            if (!is_valid_ticket_id(name)) continue;
            changed_ids_.insert(std::string{name});
            // A folder made again (a `git checkout`, `rm` then `cp -r`) is a new inode: its
            // old watch ended with it. Watching a folder twice is harmless.
            if ((header.mask & (IN_CREATE | IN_MOVED_TO)) != 0) watch(std::string{name});
        } else if (auto it = watched_.find(header.wd); it != watched_.end()) {
            if (name == log_file_name) changed_ids_.insert(it->second);
        }
    }
}

}  // namespace board::orchestrator
