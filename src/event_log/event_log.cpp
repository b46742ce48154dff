#include "event_log/posix_file.hpp"
#include "event_log/scanner.hpp"
#include "support/unique_fd.hpp"

#include <board/event_log.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <unistd.h>
#include <unordered_set>
#include <utility>

namespace board {

using namespace event_log_detail;

std::string random_event_id() {
    // 128 bits from the kernel on every call: nothing to reseed after a fork.
    std::uint64_t words[2] = {};
    event_log_detail::random_words(words);
    return fmt::format("{:016x}{:016x}", words[0], words[1]);
}

namespace {

constexpr std::size_t recent_id_count = 1024;  ///< how far back a retried append is recognised

}  // namespace

UnixMillis wall_clock_now() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// -------------------------------------------------------------------------------------------
// EventLog

struct EventLog::Impl {
    std::filesystem::path dir;
    std::string path;
    LogOptions options;
    Scanner scanner;

    // The cache: everything read so far, valid while the file keeps its identity and grows.
    bool cached = false;
    FileStat identity;
    Position pos;
    std::int64_t events = 0;
    /// Shared with the Committed results handed out (copy-on-write, see owned()), so an
    /// append never copies a long history unless a caller still holds the previous ticket.
    std::shared_ptr<Ticket> ticket = std::make_shared<Ticket>();
    std::deque<std::string> recent_ids;
    std::string write_buffer;

    Impl(std::filesystem::path ticket_dir, LogOptions opts)
        : dir(std::move(ticket_dir))
        , path((dir / log_file_name).string())
        , options(std::move(opts))
        , scanner(path) {
        if (!options.clock) options.clock = wall_clock_now;
        if (!options.new_id) options.new_id = random_event_id;
    }

    void forget() {
        cached = false;
        pos = {};
        events = 0;
        ticket = std::make_shared<Ticket>();
        recent_ids.clear();
    }

    /// The cached ticket, ready to be moved from: copied first only if a caller shares it.
    Ticket& owned() {
        if (ticket.use_count() > 1) ticket = std::make_shared<Ticket>(*ticket);
        return *ticket;
    }

    void remember_id(std::string id) {
        recent_ids.push_back(std::move(id));
        if (recent_ids.size() > recent_id_count) recent_ids.pop_front();
    }

    /// Brings the cache up to the end of the file. Returns the torn tail found, if any; the
    /// caller recovers it (under the lock) or takes the lock and comes back.
    /// `opened_as`: the file as open_log_file saw it, when nothing (no lock) came between.
    LogResult<std::optional<Torn>> catch_up(int fd,
                                            std::uint64_t& end,
                                            const FileStat* opened_as = nullptr) {
        auto st = opened_as ? LogResult<FileStat>{*opened_as} : stat_fd(fd, path);
        if (auto* e = std::get_if<LogError>(&st)) return std::move(*e);
        const FileStat now = std::get<FileStat>(st);
        if (!cached || now.dev != identity.dev || now.ino != identity.ino ||
            now.size < pos.offset) {
            forget();
        }
        cached = true;
        identity = now;
        end = now.size;
        auto scanned = scanner.scan(fd, end, pos, [this](Event&& event, std::int64_t line) {
            Reduced next = reduce(std::move(owned()), event);
            if (!next) {
                // `ticket` was moved from: the cache is unusable until re-read.
                cached = false;
                return std::optional<LogError>{
                    LogError{LogError::Kind::corrupt,
                             fmt::format("{}:{}: event seq {} ({}) is refused by the reducer: {}",
                                         path,
                                         line,
                                         event.seq,
                                         type_name(event.payload),
                                         next.error().message)}};
            }
            *ticket = std::move(next).value();
            ++events;
            remember_id(std::move(event.id));
            return std::optional<LogError>{};
        });
        if (std::holds_alternative<LogError>(scanned)) forget();
        return scanned;
    }

    /// catch_up on a locked, writable fd, recovering a torn tail.
    std::optional<LogError> catch_up_locked(int fd, ReadReport& report) {
        std::uint64_t end = 0;
        auto scanned = catch_up(fd, end);
        if (auto* e = std::get_if<LogError>(&scanned)) return std::move(*e);
        if (const auto& torn = std::get<std::optional<Torn>>(scanned)) {
            auto moved = recover_torn_tail(fd, path, *torn, end, report.warnings);
            if (auto* e = std::get_if<LogError>(&moved)) {
                forget();
                return std::move(*e);
            }
            report.torn_bytes += std::get<std::uint64_t>(moved);
            identity.size = torn->offset;
        }
        return std::nullopt;
    }

    void finish_report(ReadReport& report) const {
        report.events = events;
        report.last_seq = pos.last_seq;
        report.empty = pos.offset == 0;
        if (report.empty) {
            report.warnings.push_back(
                fmt::format("{}: the log is empty (a ticket with no events)", path));
        }
    }

    /// The log opened for appending and locked; `create`: made if the folder has none.
    LogResult<UniqueFd> lock_for_write(bool create = true) {
        auto opened = create ? open_for_append(dir, path) : open_log_file(path, O_RDWR | O_APPEND);
        if (auto* e = std::get_if<LogError>(&opened)) {
            if (!create && e->kind == LogError::Kind::not_found)
                return LogError{LogError::Kind::not_found, fmt::format("{}: no such log", path)};
            return std::move(*e);
        }
        UniqueFd fd = std::move(std::get<UniqueFd>(opened));
        if (auto e = lock_exclusive(fd.get(), path, options.lock_timeout)) return std::move(*e);
        return fd;
    }

    LogResult<Loaded> load() {
        ReadReport report;
        {
            FileStat opened_as;
            auto opened = open_log_file(path, O_RDONLY, 0, &opened_as);
            if (auto* e = std::get_if<LogError>(&opened)) {
                if (e->kind == LogError::Kind::not_found)
                    return LogError{LogError::Kind::not_found,
                                    fmt::format("{}: no such log", path)};
                return std::move(*e);
            }
            const UniqueFd fd = std::move(std::get<UniqueFd>(opened));
            std::uint64_t end = 0;
            auto scanned = catch_up(fd.get(), end, &opened_as);
            if (auto* e = std::get_if<LogError>(&scanned)) return std::move(*e);
            if (!std::get<std::optional<Torn>>(scanned)) {
                finish_report(report);
                return Loaded{*ticket, std::move(report)};
            }
        }
        // A torn tail seen without the lock may be a write in progress: look again under it.
        auto reopened = open_log_file(path, O_RDWR);
        if (auto* e = std::get_if<LogError>(&reopened)) return std::move(*e);
        const UniqueFd fd = std::move(std::get<UniqueFd>(reopened));
        if (auto e = lock_exclusive(fd.get(), path, options.lock_timeout)) return std::move(*e);
        if (auto e = catch_up_locked(fd.get(), report)) return std::move(*e);
        finish_report(report);
        return Loaded{*ticket, std::move(report)};
    }

    TransactResult transact(bool create, const AuthoredBuilder& build) {
        auto locked = lock_for_write(create);
        if (auto* e = std::get_if<LogError>(&locked)) return std::move(*e);
        const UniqueFd fd = std::move(std::get<UniqueFd>(locked));
        ReadReport report;
        if (auto e = catch_up_locked(fd.get(), report)) return std::move(*e);

        std::vector<Authored> drafts = build(static_cast<const Ticket&>(*ticket));
        if (drafts.empty()) {
            finish_report(report);
            return Committed{ticket, {}, false, std::move(report)};
        }
        const UnixMillis at = options.clock();
        std::vector<Event> batch;
        batch.reserve(drafts.size());
        for (auto& draft : drafts) {
            batch.push_back(Event{event_schema_version,
                                  pos.last_seq + 1 + static_cast<std::int64_t>(batch.size()),
                                  options.new_id(),
                                  at,
                                  std::move(draft.by),
                                  std::move(draft.payload)});
        }
        return commit(fd.get(), std::move(batch), std::move(report));
    }

    /// Under the lock, with the cache caught up: reduce, write once, sync once.
    TransactResult commit(int fd, std::vector<Event> batch, ReadReport report) {
        // Fold the batch into the cached ticket itself: copying a ticket with a long history
        // per append would cost more than the append. A refusal consumed it, so the cache is
        // dropped and the next call re-reads the log (refusals are rare; appends are not).
        Ticket next = std::move(owned());
        for (std::size_t i = 0; i < batch.size(); ++i) {
            Reduced reduced = reduce(std::move(next), batch[i]);
            if (!reduced) {
                forget();
                return Refused{i, reduced.error()};
            }
            next = std::move(reduced).value();
        }
        write_buffer.clear();
        for (std::size_t i = 0; i < batch.size(); ++i) {
            const std::size_t start = write_buffer.size();
            append_event(write_buffer, batch[i]);
            // A line no reader would take is never written.
            if (write_buffer.size() - start > max_event_line_bytes) {
                forget();  // `ticket` holds the unwritten batch
                return LogError{LogError::Kind::invalid_batch,
                                fmt::format("{}: event {} of the batch ({}) is {} bytes, over "
                                            "the {} bytes a log line may hold",
                                            path,
                                            i + 1,
                                            type_name(batch[i].payload),
                                            write_buffer.size() - start,
                                            max_event_line_bytes)};
            }
            write_buffer += '\n';
        }
        std::optional<LogError> failed = write_once(fd, write_buffer, path);
        if (!failed) failed = sync_data(fd, path);
        if (failed) {
            // Not acknowledged, so it must not survive: cut the partial batch away. If even
            // that fails, the next open sees a torn tail or the lines, never a lie.
            [[maybe_unused]] const int ignored = ::ftruncate(fd, static_cast<off_t>(pos.offset));
            forget();  // `ticket` holds the unwritten batch
            return std::move(*failed);
        }
        pos.offset += write_buffer.size();
        pos.line += static_cast<std::int64_t>(batch.size());
        pos.last_seq = batch.back().seq;
        identity.size = pos.offset;
        events += static_cast<std::int64_t>(batch.size());
        *ticket = std::move(next);
        for (const Event& event : batch) remember_id(event.id);
        finish_report(report);
        return Committed{ticket, std::move(batch), false, std::move(report)};
    }
};

EventLog::EventLog(std::filesystem::path ticket_dir, LogOptions options)
    : impl_(std::make_unique<Impl>(std::move(ticket_dir), std::move(options))) {}

EventLog::~EventLog() = default;
EventLog::EventLog(EventLog&&) noexcept = default;
EventLog& EventLog::operator=(EventLog&&) noexcept = default;

LogResult<Loaded> EventLog::load() {
    return impl_->load();
}

AppendResult EventLog::append(std::vector<Event> events, std::int64_t expected_last_seq) {
    Impl& impl = *impl_;
    if (events.empty()) {
        return LogError{LogError::Kind::invalid_batch,
                        fmt::format("{}: an empty batch", impl.path)};
    }
    {
        std::unordered_set<std::string_view> ids;
        for (const Event& e : events) {
            if (e.id.empty() || !ids.insert(e.id).second) {
                return LogError{
                    LogError::Kind::invalid_batch,
                    fmt::format("{}: event ids must be non-empty and distinct within a batch "
                                "(\"{}\")",
                                impl.path,
                                e.id)};
            }
        }
    }
    auto locked = impl.lock_for_write();
    if (auto* e = std::get_if<LogError>(&locked)) return std::move(*e);
    const UniqueFd fd = std::move(std::get<UniqueFd>(locked));
    ReadReport report;
    if (auto e = impl.catch_up_locked(fd.get(), report)) return std::move(*e);

    if (impl.pos.last_seq != expected_last_seq) {
        // A retry of an append that landed: its ids are in the tail. (If the log's last seq
        // were still the expected one, the batch could not have landed.)
        if (std::find(impl.recent_ids.begin(), impl.recent_ids.end(), events.front().id) !=
            impl.recent_ids.end()) {
            impl.finish_report(report);
            return Committed{impl.ticket, {}, true, std::move(report)};
        }
        return Conflict{expected_last_seq,
                        impl.pos.last_seq,
                        fmt::format("{}: the log moved on: expected last seq {}, found {}",
                                    impl.path,
                                    expected_last_seq,
                                    impl.pos.last_seq)};
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        events[i].v = event_schema_version;
        events[i].seq = expected_last_seq + 1 + static_cast<std::int64_t>(i);
    }
    auto result = impl.commit(fd.get(), std::move(events), std::move(report));
    return std::visit([](auto&& r) -> AppendResult { return std::move(r); }, std::move(result));
}

TransactResult EventLog::transact(const Actor& by, const BatchBuilder& build) {
    return impl_->transact(true, [&](const Ticket& now) {
        std::vector<Authored> batch;
        for (auto& payload : build(now)) batch.push_back(Authored{by, std::move(payload)});
        return batch;
    });
}

TransactResult EventLog::transact_existing(const AuthoredBuilder& build) {
    return impl_->transact(false, build);
}

// -------------------------------------------------------------------------------------------
// Free functions

LogResult<ReadReport> read_log(const std::filesystem::path& log_file,
                               const std::function<void(const Event&)>& visit,
                               const LogOptions& options) {
    const std::string path = log_file.string();
    Scanner scanner{path};
    Position pos;
    ReadReport report;
    auto sink = [&](Event&& event, std::int64_t) {
        visit(event);
        ++report.events;
        return std::optional<LogError>{};
    };
    std::optional<Torn> torn;
    {
        FileStat opened_as;
        auto opened = open_log_file(path, O_RDONLY, 0, &opened_as);
        if (auto* e = std::get_if<LogError>(&opened)) {
            if (e->kind == LogError::Kind::not_found)
                return LogError{LogError::Kind::not_found, fmt::format("{}: no such log", path)};
            return std::move(*e);
        }
        const UniqueFd fd = std::move(std::get<UniqueFd>(opened));
        auto scanned = scanner.scan(fd.get(), opened_as.size, pos, sink);
        if (auto* e = std::get_if<LogError>(&scanned)) return std::move(*e);
        torn = std::get<std::optional<Torn>>(scanned);
    }
    if (torn) {
        // As in EventLog::load: look again under the writers' lock before moving bytes.
        auto reopened = open_log_file(path, O_RDWR);
        if (auto* e = std::get_if<LogError>(&reopened)) return std::move(*e);
        const UniqueFd fd = std::move(std::get<UniqueFd>(reopened));
        if (auto e = lock_exclusive(fd.get(), path, options.lock_timeout)) return std::move(*e);
        auto st = stat_fd(fd.get(), path);
        if (auto* e = std::get_if<LogError>(&st)) return std::move(*e);
        const std::uint64_t end = std::get<FileStat>(st).size;
        if (end < pos.offset) {
            return LogError{LogError::Kind::io,
                            fmt::format("{}: the file shrank below its last complete line ({} "
                                        "bytes) while being read; was it replaced?",
                                        path,
                                        pos.offset)};
        }
        auto scanned = scanner.scan(fd.get(), end, pos, sink);
        if (auto* e = std::get_if<LogError>(&scanned)) return std::move(*e);
        if (const auto& again = std::get<std::optional<Torn>>(scanned)) {
            auto moved = recover_torn_tail(fd.get(), path, *again, end, report.warnings);
            if (auto* e = std::get_if<LogError>(&moved)) return std::move(*e);
            report.torn_bytes = std::get<std::uint64_t>(moved);
        }
    }
    report.last_seq = pos.last_seq;
    report.empty = pos.offset == 0;
    if (report.empty) {
        report.warnings.push_back(
            fmt::format("{}: the log is empty (a ticket with no events)", path));
    }
    return report;
}

LogResult<Loaded> load_ticket(const std::filesystem::path& ticket_dir, const LogOptions& options) {
    return EventLog{ticket_dir, options}.load();
}

AppendResult append_events(const std::filesystem::path& ticket_dir,
                           std::vector<Event> events,
                           std::int64_t expected_last_seq,
                           const LogOptions& options) {
    return EventLog{ticket_dir, options}.append(std::move(events), expected_last_seq);
}

TransactResult transact(const std::filesystem::path& ticket_dir,
                        const Actor& by,
                        const BatchBuilder& build,
                        const LogOptions& options) {
    return EventLog{ticket_dir, options}.transact(by, build);
}

TransactResult transact_existing(const std::filesystem::path& ticket_dir,
                                 const AuthoredBuilder& build,
                                 const LogOptions& options) {
    return EventLog{ticket_dir, options}.transact_existing(build);
}

}  // namespace board
