// The I/O half of the catalog: the board's tickets from the index, the snapshots or the logs,
// in that order of preference, each cache checked against the log before it is believed.

#include "catalog/index_file.hpp"

#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace board {
namespace {

using catalog_index::IndexLine;
using catalog_index::LogIdentity;

/// Closes a file descriptor when it goes out of scope.
class Fd {
public:
    explicit Fd(int fd)
        : fd_(fd) {}

    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    int get() const { return fd_; }

private:
    int fd_;
};

std::optional<std::string> read_whole(int dir_fd, const std::string& relative) {
    Fd fd{::openat(dir_fd, relative.c_str(), O_RDONLY | O_CLOEXEC)};
    if (fd.get() < 0) return std::nullopt;

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0) return std::nullopt;
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t got = ::read(fd.get(), text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += static_cast<std::size_t>(got);
    }
    text.resize(done);
    return text;
}

LogIdentity identity_of(const struct stat& st) {
    return LogIdentity{static_cast<std::uint64_t>(st.st_ino),
                       static_cast<std::uint64_t>(st.st_size),
                       static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                           static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
}

/// The seq of the log's last complete line, read from its tail only. nullopt when the tail
/// is not a complete, decodable line (a write in progress, a torn tail): fold the log then.
std::optional<std::int64_t> last_seq(int dir_fd, const std::string& log_relative) {
    Fd fd{::openat(dir_fd, log_relative.c_str(), O_RDONLY | O_CLOEXEC)};
    if (fd.get() < 0) return std::nullopt;

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0 || st.st_size <= 0) return std::nullopt;
    constexpr off_t window = 64 * 1024;
    const off_t from = st.st_size > window ? st.st_size - window : 0;
    std::string tail(static_cast<std::size_t>(st.st_size - from), '\0');
    const ssize_t got = ::pread(fd.get(), tail.data(), tail.size(), from);
    if (got != static_cast<ssize_t>(tail.size()) || tail.back() != '\n') return std::nullopt;
    tail.pop_back();
    const auto start = tail.rfind('\n');
    if (start == std::string::npos && from > 0) return std::nullopt;  // a line over 64 KiB
    auto event =
        decode_event(std::string_view{tail}.substr(start == std::string::npos ? 0 : start + 1));
    if (!event) return std::nullopt;
    return event.value().seq;
}

/// Rebuilds one ticket's entry: the snapshot if it is as new as the log, else a fold of the
/// log (and a fresh snapshot). nullopt with a warning when the log cannot be read.
std::optional<CatalogEntry> rebuild(const fs::path& tickets,
                                    int tickets_fd,
                                    const std::string& id,
                                    std::vector<std::string>& warnings) {
    const auto tail_seq = last_seq(tickets_fd, id + "/" + std::string{log_file_name});
    if (tail_seq) {
        if (const auto text = read_whole(tickets_fd, id + "/" + std::string{snapshot_file_name})) {
            auto snapshot = decode_ticket(*text);
            if (snapshot && snapshot.value().seq == *tail_seq && snapshot.value().id == id)
                return summarize(snapshot.value());
        }
    }
    auto loaded = load_ticket(tickets / id);
    if (const auto* error = std::get_if<LogError>(&loaded)) {
        warnings.push_back(fmt::format("{} left out: {}", id, error->message));
        return std::nullopt;
    }
    auto& ok = std::get<Loaded>(loaded);
    for (auto& w : ok.report.warnings) warnings.push_back(std::move(w));
    if (ok.ticket.id.empty()) return std::nullopt;  // no event yet: a create in progress
    if (auto failed = write_snapshot(tickets / id, ok.ticket)) warnings.push_back(*failed);
    return summarize(ok.ticket);
}

std::string temp_name(const fs::path& target) {
    static std::atomic<unsigned> counter{0};
    return fmt::format("{}.{}.{}.tmp", target.string(), ::getpid(), counter++);
}

/// Temp file + rename, no fsync: for caches only.
std::optional<std::string> replace_file(const fs::path& target, std::string_view content) {
    const std::string temp = temp_name(target);
    Fd fd{::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (fd.get() < 0) return fmt::format("cannot write {}: {}", temp, std::strerror(errno));
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t put = ::write(fd.get(), content.data() + done, content.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            const std::string why = std::strerror(errno);
            ::unlink(temp.c_str());
            return fmt::format("cannot write {}: {}", temp, why);
        }
        done += static_cast<std::size_t>(put);
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temp.c_str());
        return fmt::format("cannot rename {} to {}: {}", temp, target.string(), why);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> write_snapshot(const fs::path& ticket_dir, const Ticket& ticket) {
    std::string json = encode_ticket(ticket);
    json += '\n';
    return replace_file(ticket_dir / snapshot_file_name, json);
}

std::variant<CatalogLoad, CatalogError> load_catalog(const fs::path& board_root) {
    const fs::path tickets = board_root / "tickets";
    Fd tickets_fd{::open(tickets.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (tickets_fd.get() < 0)
        return CatalogError{
            fmt::format("cannot read {}: {}", tickets.string(), std::strerror(errno))};

    // What the index says, by id.
    std::unordered_map<std::string, IndexLine> indexed;
    const auto index_text = read_whole(tickets_fd.get(), std::string{index_file_name});
    bool index_dirty = !index_text.has_value();
    if (index_text) {
        std::string_view rest{*index_text};
        if (rest.substr(0, catalog_index::header.size()) != catalog_index::header) {
            index_dirty = true;
        } else {
            rest.remove_prefix(catalog_index::header.size());
            indexed.reserve(rest.size() / 160);
            while (!rest.empty()) {
                const auto end = rest.find('\n');
                if (end == std::string_view::npos) {
                    index_dirty = true;  // a torn index: rebuild what is missing
                    break;
                }
                if (auto line = catalog_index::parse_line(rest.substr(0, end))) {
                    std::string id = line->entry.ticket.id;
                    indexed.emplace(std::move(id), std::move(*line));
                } else {
                    index_dirty = true;
                }
                rest.remove_prefix(end + 1);
            }
        }
    }

    // Every ticket folder, each log's identity checked against its index line.
    DIR* dir = ::fdopendir(::dup(tickets_fd.get()));
    if (!dir)
        return CatalogError{
            fmt::format("cannot list {}: {}", tickets.string(), std::strerror(errno))};
    CatalogLoad load;
    std::vector<IndexLine> lines;
    lines.reserve(indexed.size() + 16);
    std::string log_relative;
    while (const dirent* item = ::readdir(dir)) {
        const std::string_view name{item->d_name};
        if (!is_valid_ticket_id(name)) continue;
        log_relative.assign(name);
        log_relative += '/';
        log_relative += log_file_name;

        struct stat st {};

        if (::fstatat(tickets_fd.get(), log_relative.c_str(), &st, 0) != 0) continue;  // no log yet
        const LogIdentity now = identity_of(st);
        const std::string id{name};
        if (const auto it = indexed.find(id); it != indexed.end() && it->second.log == now) {
            lines.push_back(std::move(it->second));
            continue;
        }
        // The identity was taken before the read: if the log grows meanwhile, the line is
        // stale on the next load and rebuilt, never believed newer than it is.
        auto entry = rebuild(tickets, tickets_fd.get(), id, load.warnings);
        index_dirty = true;
        if (!entry) continue;
        ++load.rebuilt;
        lines.push_back(IndexLine{now, std::move(*entry)});
    }
    ::closedir(dir);
    if (lines.size() != indexed.size()) index_dirty = true;  // tickets gone or left out

    if (index_dirty) {
        std::string text{catalog_index::header};
        text.reserve(lines.size() * 180);
        for (const auto& line : lines) catalog_index::append_line(text, line);
        // A board on a read-only disk still lists: the index is only a cache.
        (void)replace_file(tickets / index_file_name, text);
    }

    std::vector<CatalogEntry> entries;
    entries.reserve(lines.size());
    for (auto& line : lines) entries.push_back(std::move(line.entry));
    load.catalog = Catalog{std::move(entries)};
    return load;
}

}  // namespace board
