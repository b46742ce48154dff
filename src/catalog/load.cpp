// The I/O half of the catalog: the board's tickets from the index, the snapshots or the logs,
// in that order of preference, each cache checked against the log before it is believed.

#include "catalog/in_halves.hpp"
#include "catalog/index_file.hpp"

#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/write_generation.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
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

/// A whole file mapped read-only, straight from the page cache: no zero-filled buffer and no
/// copy (the index is 2.2 MB at 10,000 tickets), every page mapped by the one call.
class MappedFile {
public:
    MappedFile() = default;

    MappedFile(int dir_fd, const std::string& relative) {
        Fd fd{::openat(dir_fd, relative.c_str(), O_RDONLY | O_CLOEXEC)};
        if (fd.get() < 0) return;

        struct stat st {};

        if (::fstat(fd.get(), &st) != 0) return;
        opened_ = true;
        if (st.st_size <= 0) return;
        void* at = ::mmap(nullptr,
                          static_cast<std::size_t>(st.st_size),
                          PROT_READ,
                          MAP_PRIVATE | MAP_POPULATE,
                          fd.get(),
                          0);
        if (at == MAP_FAILED) {
            opened_ = false;
            return;
        }
        data_ = static_cast<const char*>(at);
        size_ = static_cast<std::size_t>(st.st_size);
    }

    ~MappedFile() {
        if (data_) ::munmap(const_cast<char*>(data_), size_);
    }

    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    /// False when the file could not be opened (missing): as read_whole's nullopt.
    bool opened() const { return opened_; }

    std::string_view text() const { return {data_ ? data_ : "", size_}; }

private:
    bool opened_ = false;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

LogIdentity identity_of(const struct stat& st) {
    return LogIdentity{static_cast<std::uint64_t>(st.st_ino),
                       static_cast<std::uint64_t>(st.st_size),
                       static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                           static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
}

/// The seq of the log's last complete line, read from its tail only. nullopt when the tail
/// is not a complete, decodable line (a write in progress, a torn tail): fold the log then.
/// `<id>/events.jsonl`, relative to `tickets/`, into `path` (a buffer reused across tickets).
const char* log_path_of(std::string_view id, std::string& path) {
    path.assign(id);
    path += '/';
    path += log_file_name;
    return path.c_str();
}

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
    std::string log;
    log_path_of(id, log);
    const auto tail_seq = last_seq(tickets_fd, log);
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

/// Asks the kernel to map a fresh buffer in one go (huge pages where it can, every page
/// populated by one call) instead of one page fault per 4 KiB as it is first written: on a
/// virtual machine each fault is a trap, and at 10,000 tickets faults were a quarter of a
/// `board list`. Best effort: older kernels refuse and nothing changes.
void prefault(void* data, std::size_t bytes) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
    if (end <= begin) return;
    void* start = reinterpret_cast<void*>(begin);
    (void)::madvise(start, end - begin, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    (void)::madvise(start, end - begin, MADV_POPULATE_WRITE);
#endif
}

/// The identity of the git index of the work tree holding `board_root`, or `no-git`. Git
/// rewrites its index on every checkout, pull, merge, reset and stash, which is how a board
/// kept in git has its logs changed by something other than a board writer. nullopt when it
/// cannot be told (a `.git` file that does not name its git folder): then nothing vouches.
std::optional<std::string> git_index_identity(const fs::path& board_root) {
    std::error_code ec;
    // Symlinks resolved, as git finds its work tree from the real folder.
    fs::path dir = fs::canonical(board_root, ec);
    if (ec) return std::nullopt;
    while (true) {
        const fs::path dot_git = dir / ".git";

        struct stat st {};

        if (::stat(dot_git.c_str(), &st) == 0) {
            fs::path index = dot_git / "index";
            if (S_ISREG(st.st_mode)) {  // a linked work tree: `gitdir: PATH`
                const auto text = read_whole(AT_FDCWD, dot_git.string());
                if (!text || text->rfind("gitdir: ", 0) != 0) return std::nullopt;
                std::string target = text->substr(8);
                while (!target.empty() && (target.back() == '\n' || target.back() == '\r'))
                    target.pop_back();
                if (target.empty()) return std::nullopt;
                index = (dir / target) / "index";  // a relative gitdir is relative to `dir`
            }
            if (::stat(index.c_str(), &st) != 0) return fmt::format("{} none", index.string());
            const LogIdentity id = identity_of(st);
            return fmt::format("{} {} {} {}", index.string(), id.inode, id.size, id.mtime_ns);
        }
        if (dir == dir.root_path() || !dir.has_parent_path()) return "no-git";
        dir = dir.parent_path();
    }
}

/// The key an index is recorded under when nothing vouches for it: every load checks every log.
constexpr std::string_view unvouched_key = "-";

/// What must be unchanged for the index to be believed without statting every log: the
/// board's write generation, the boot (a power cut can take back unsynced bumps) and the git
/// index (a checkout or pull changes logs behind the board's back). Read BEFORE the logs are
/// checked, so a change during the check leaves a later key. In the index's first line it is
/// `NONCE.COUNTER BOOT GIT`; a later load whose nonce, boot and git agree, and whose counter
/// moved on, asks the generation's ring which tickets the bumps in between were about.
struct Freshness {
    std::unique_ptr<GenerationView> view;
    WriteGeneration generation;
    std::string boot_and_git;

    std::string key(std::uint64_t counter) const {
        return fmt::format("{:016x}.{} {}", generation.nonce, counter, boot_and_git);
    }

    /// The counter `recorded` was written at, if it was written under this nonce, boot and
    /// git index and is not ahead of the generation now.
    std::optional<std::uint64_t> recorded_counter(std::string_view recorded) const {
        const std::string nonce = fmt::format("{:016x}.", generation.nonce);
        if (!recorded.starts_with(nonce)) return std::nullopt;
        recorded.remove_prefix(nonce.size());
        const auto space = recorded.find(' ');
        if (space == std::string_view::npos || recorded.substr(space + 1) != boot_and_git)
            return std::nullopt;
        std::uint64_t counter = 0;
        const auto digits = recorded.substr(0, space);
        const auto [end, ec] =
            std::from_chars(digits.data(), digits.data() + digits.size(), counter);
        if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
        if (counter > generation.counter) return std::nullopt;
        return counter;
    }
};

/// nullopt: nothing can vouch for an index on this board now (every load checks every log).
std::optional<Freshness> read_freshness(int tickets_fd,
                                        const fs::path& tickets,
                                        const fs::path& board_root) {
    // The generation lives in one machine's page cache: a board written from several machines
    // over a network file system asks for every log to be checked on every load.
    if (const char* every = std::getenv("BOARD_CHECK_EVERY_LOG"); every && *every && *every != '0')
        return std::nullopt;
    Freshness fresh;
    fresh.view = std::make_unique<GenerationView>(tickets_fd);
    auto generation = fresh.view->generation();
    if (!generation) {
        // The first load of this board (or of a copy): start its generation.
        start_write_generation(tickets);
        fresh.view = std::make_unique<GenerationView>(tickets_fd);
        generation = fresh.view->generation();
    }
    if (!generation) return std::nullopt;
    fresh.generation = *generation;
    const std::string boot = boot_id();
    if (boot.empty()) return std::nullopt;
    const auto git = git_index_identity(board_root);
    if (!git) return std::nullopt;
    fresh.boot_and_git = boot + " " + *git;
    return fresh;
}

/// Writes the index: a header with `key`, then one line per entry in id order. A line whose
/// text from the index being replaced is still at hand (`texts[i]` not empty) is copied as it
/// is: at 10,000 tickets formatting every line again was most of a rewrite. A board on a
/// read-only disk still lists: the index is only a cache.
void write_index(const fs::path& tickets,
                 const std::vector<CatalogEntry>& entries,
                 const std::vector<LogIdentity>& identities,
                 const std::vector<std::string_view>& texts,
                 std::string_view key) {
    std::vector<std::size_t> order(entries.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // Nearly always in id order already (the index's own, plus a new ticket or two at the
    // end): sorting 10,000 ids by their parts would be a third of writing the index.
    const auto by_id = [&](std::size_t a, std::size_t b) {
        return id_less(entries[a].ticket.id, entries[b].ticket.id);
    };
    if (!std::is_sorted(order.begin(), order.end(), by_id))
        std::sort(order.begin(), order.end(), by_id);
    std::string text{catalog_index::header_prefix};
    text.reserve(entries.size() * 240 + 128);
    text += key;
    text += '\n';
    IndexLine line;
    for (const std::size_t i : order) {
        if (!texts[i].empty()) {
            text += texts[i];
            text += '\n';
            continue;
        }
        // append_line wants an IndexLine; the bulk fields are empty, so the copy is small.
        line.log = identities[i];
        line.entry = entries[i];
        catalog_index::append_line(text, line);
    }
    (void)replace_file(tickets / index_file_name, text);
}

/// Keeps the index lines `i` for which `keep(i, kept so far)` holds, in order, in place (the
/// entries, their log identities and their texts side by side).
template <class Keep>
void keep_lines(std::vector<CatalogEntry>& entries,
                std::vector<LogIdentity>& identities,
                std::vector<std::string_view>& texts,
                Keep keep) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!keep(i, kept)) continue;
        if (kept != i) {
            entries[kept] = std::move(entries[i]);
            identities[kept] = identities[i];
            texts[kept] = texts[i];
        }
        ++kept;
    }
    entries.resize(kept);
    identities.resize(kept);
    texts.resize(kept);
}

/// Appends lines made afresh (no text to copy: write_index formats them).
void append_lines(std::vector<CatalogEntry>& entries,
                  std::vector<LogIdentity>& identities,
                  std::vector<std::string_view>& texts,
                  std::vector<IndexLine>& lines) {
    for (auto& line : lines) {
        entries.push_back(std::move(line.entry));
        identities.push_back(line.log);
        texts.emplace_back();
    }
}

/// Parses the index's ticket lines into `entries`, `identities` and `lines` (their text), in
/// file order. Once the logs need no stat, parsing and building the entries is most of a big
/// board's load, so on a big board two threads take half each (into slots made beforehand,
/// so nothing moves). A line that does not parse, or does not come strictly after the one kept
/// before it in id order (each ticket must have at most one line), is dropped: its ticket is
/// rebuilt from its folder. Returns true if any line was dropped or the last one is torn.
bool parse_index_lines(std::string_view body,
                       std::vector<CatalogEntry>& entries,
                       std::vector<LogIdentity>& identities,
                       std::vector<std::string_view>& lines) {
    bool dropped = false;
    lines.reserve(body.size() / 160 + 16);
    const char* at = body.data();
    const char* const end = at + body.size();
    while (at < end) {
        const auto* newline =
            static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(end - at)));
        if (!newline) {
            dropped = true;  // a torn index: rebuild what is missing
            break;
        }
        lines.emplace_back(at, static_cast<std::size_t>(newline - at));
        at = newline + 1;
    }
    const std::size_t count = lines.size();
    entries.reserve(count + 64);
    prefault(entries.data(), entries.capacity() * sizeof(CatalogEntry));
    entries.resize(count);
    identities.resize(count);
    std::vector<char> parsed(count, 0);
    const auto parse_range = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i)
            parsed[i] = catalog_index::parse_line_into(lines[i], identities[i], entries[i]) ? 1 : 0;
    };
    in_halves(count, parse_range);

    keep_lines(entries, identities, lines, [&](std::size_t i, std::size_t kept) {
        const bool keep =
            parsed[i] && (kept == 0 || id_less(entries[kept - 1].ticket.id, entries[i].ticket.id));
        dropped = dropped || !keep;
        return keep;
    });
    return dropped;
}

/// A load that checks only the tickets the generation's ring names (`touched`), against an
/// index whose lines were current at the generation it records: each such log is statted,
/// and its line rebuilt if the log changed, added for a new ticket, dropped for a gone one.
/// The index is rewritten when a line changed or its key moved on.
CatalogLoad load_touched(const fs::path& tickets,
                         int tickets_fd,
                         std::vector<CatalogEntry> entries,
                         std::vector<LogIdentity> identities,
                         std::vector<std::string_view> texts,
                         const Touched& touched,
                         std::string_view index_key,
                         const Freshness& fresh) {
    CatalogLoad load;
    bool changed = false;  // a line rebuilt, added or dropped
    std::vector<char> gone(entries.size(), 0);
    std::vector<IndexLine> added;
    std::string log;
    for (const std::string& id : touched.tickets) {
        if (!is_valid_ticket_id(id)) continue;  // never written by a board writer
        // The index's lines are in id order (parse_index_lines keeps no other).
        const auto it = std::lower_bound(
            entries.begin(), entries.end(), id, [](const CatalogEntry& e, const std::string& v) {
                return id_less(e.ticket.id, v);
            });
        const bool indexed = it != entries.end() && it->ticket.id == id;
        const auto at = static_cast<std::size_t>(it - entries.begin());

        struct stat st {};

        if (::fstatat(tickets_fd, log_path_of(id, log), &st, 0) != 0) {
            // Gone, or a ticket whose create has not written its first event yet.
            if (indexed) gone[at] = 1;
            changed = changed || indexed;
            continue;
        }
        const LogIdentity now = identity_of(st);
        if (indexed && identities[at] == now) continue;
        changed = true;
        auto entry = rebuild(tickets, tickets_fd, id, load.warnings);
        ++load.rebuilt;
        if (!entry) {
            if (indexed) gone[at] = 1;  // left out with a warning, as a full check does
        } else if (indexed) {
            entries[at] = std::move(*entry);
            identities[at] = now;
            texts[at] = {};
        } else {
            added.push_back(IndexLine{now, std::move(*entry)});
        }
    }
    if (std::find(gone.begin(), gone.end(), 1) != gone.end())
        keep_lines(
            entries, identities, texts, [&](std::size_t i, std::size_t) { return gone[i] == 0; });
    append_lines(entries, identities, texts, added);
    const std::string recorded_key =
        load.warnings.empty() ? fresh.key(touched.settled) : std::string{unvouched_key};
    if (changed || index_key != recorded_key)
        write_index(tickets, entries, identities, texts, recorded_key);
    load.catalog = Catalog{std::move(entries)};
    return load;
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

    // What the index says, parsed in place in its (id) order; a map from id to position is
    // built once the vector stops growing. At 10,000 tickets moving Tickets around (and
    // touching fresh pages for each copy) costs more than parsing, so entries are parsed into
    // the vector the catalog will own.
    std::vector<CatalogEntry> entries;
    std::vector<LogIdentity> identities;
    std::vector<std::string_view> texts;  // each line's text in the mapped index
    // Mapped, not read: a file replaced by a writer meanwhile (rename) leaves this mapping on
    // the old file, which is the snapshot every line is checked against anyway; a rewrite in
    // place never happens (the index is only ever replaced).
    const auto fresh = read_freshness(tickets_fd.get(), tickets, board_root);
    const MappedFile index_file{tickets_fd.get(), std::string{index_file_name}};
    bool index_dirty = !index_file.opened();
    std::optional<std::uint64_t> vouched_at;  // the index's key agrees: lines current as of it
    std::string_view index_key;               // the key the index was written under
    if (index_file.opened()) {
        std::string_view rest = index_file.text();
        const auto header_end = rest.find('\n');
        if (!rest.starts_with(catalog_index::header_prefix) ||
            header_end == std::string_view::npos) {
            index_dirty = true;
        } else {
            const auto recorded = rest.substr(catalog_index::header_prefix.size(),
                                              header_end - catalog_index::header_prefix.size());
            index_key = recorded;
            if (fresh) vouched_at = fresh->recorded_counter(recorded);
            rest.remove_prefix(header_end + 1);
            if (parse_index_lines(rest, entries, identities, texts)) index_dirty = true;
        }
    }
    if (vouched_at && !index_dirty) {
        if (*vouched_at == fresh->generation.counter) {
            // No board writer changed a log since every line was checked, the machine has
            // not rebooted and git has not touched the work tree: the index is the board.
            CatalogLoad believed;
            believed.catalog = Catalog{std::move(entries)};
            return believed;
        }
        // Writers changed some logs since: the generation's ring names them, so only those
        // are checked (a board a daemon writes is in this case nearly always).
        if (auto touched = fresh->view->touched(*vouched_at, fresh->generation.counter))
            return load_touched(tickets,
                                tickets_fd.get(),
                                std::move(entries),
                                std::move(identities),
                                std::move(texts),
                                *touched,
                                index_key,
                                *fresh);
    }
    CatalogLoad load;
    std::vector<char> current(entries.size(), 0);
    std::vector<IndexLine> rebuilt;
    std::string log;
    // Rebuilds `id`'s line from its snapshot or log. `now` is the log's identity taken before
    // the read: if the log grows meanwhile, the line is stale on the next load and rebuilt,
    // never believed newer than it is.
    const auto refresh = [&](const std::string& id, const LogIdentity& now) {
        index_dirty = true;
        if (auto entry = rebuild(tickets, tickets_fd.get(), id, load.warnings))
            rebuilt.push_back(IndexLine{now, std::move(*entry)});
    };

    // 1. Every indexed ticket's log, in index order, checked against its line. A line is kept
    //    only while the log's identity is unchanged; a changed log is rebuilt; a gone one
    //    drops its line. The stats are the bulk of a load on a big board (one path walk and
    //    one trap to the hypervisor each), so a second thread takes half of them there.
    std::vector<char> found(entries.size(), 0);  // the log exists (current or not)
    std::vector<LogIdentity> seen(entries.size());
    const auto stat_range = [&](std::size_t from, std::size_t to) {
        std::string path;
        path.reserve(64);
        for (std::size_t i = from; i < to; ++i) {
            struct stat st {};

            if (::fstatat(tickets_fd.get(), log_path_of(entries[i].ticket.id, path), &st, 0) != 0)
                continue;
            found[i] = 1;
            seen[i] = identity_of(st);
        }
    };
    in_halves(entries.size(), stat_range);
    std::size_t present = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!found[i]) continue;
        ++present;
        if (identities[i] == seen[i])
            current[i] = 1;
        else
            refresh(entries[i].ticket.id, seen[i]);
    }

    // 2. Tickets the index does not know: every ticket folder is listed. Each indexed ticket
    //    found in step 1 is one of these folders, so when the folder holds exactly as many
    //    ticket names as step 1 found, it holds no other (no lookup per name: at 10,000
    //    tickets hashing every name was an eighth of a load). Otherwise each unknown name is
    //    looked up and rebuilt (a new ticket, or a folder without a log yet: skipped).
    //    The one case the count cannot see is a ticket folder removed (no board command
    //    does) while another is created, both during this load: that load misses the new
    //    ticket, the next one (its count no longer matching) finds it.
    DIR* dir = ::fdopendir(::dup(tickets_fd.get()));
    if (!dir)
        return CatalogError{
            fmt::format("cannot list {}: {}", tickets.string(), std::strerror(errno))};
    std::vector<std::string> names;
    names.reserve(entries.size() + 16);
    while (const dirent* item = ::readdir(dir)) {
        const std::string_view name{item->d_name};
        if (is_valid_ticket_id(name)) names.emplace_back(name);
    }
    ::closedir(dir);
    if (names.size() != present) {
        std::unordered_map<std::string_view, std::size_t> position;
        position.reserve(entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) position.emplace(entries[i].ticket.id, i);
        for (const std::string& name : names) {
            if (const auto it = position.find(name); it != position.end() && found[it->second])
                continue;  // seen in step 1

            struct stat st {};

            if (::fstatat(tickets_fd.get(), log_path_of(name, log), &st, 0) != 0)
                continue;  // no log yet
            refresh(name, identity_of(st));
        }
    }
    load.rebuilt = static_cast<int>(rebuilt.size());

    if (std::find(current.begin(), current.end(), 0) != current.end()) {
        index_dirty = true;  // tickets gone, changed or left out: drop their old lines
        keep_lines(entries, identities, texts, [&](std::size_t i, std::size_t) {
            return current[i] != 0;
        });
    }
    append_lines(entries, identities, texts, rebuilt);

    // The key goes into the index only when this load checked every log and left nothing
    // out: a ticket left out with a warning must be warned about on every load.
    const std::string recorded_key =
        fresh && load.warnings.empty()
            ? fresh->key(fresh->view->settled_after_full_check(fresh->generation.counter))
            : std::string{unvouched_key};
    if (index_dirty || index_key != recorded_key)
        write_index(tickets, entries, identities, texts, recorded_key);
    load.catalog = Catalog{std::move(entries)};
    return load;
}

}  // namespace board
