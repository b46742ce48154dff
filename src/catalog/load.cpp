// The I/O half of the catalog: every ticket's entry from `tickets/.index` while the log it was
// made from is provably unchanged, else from a fold of the log. The logs are the truth; the
// index is a cache any load may rebuild and anyone may delete.

#include "catalog/id_order.hpp"
#include "catalog/index_file.hpp"
#include "support/files.hpp"
#include "support/in_halves.hpp"
#include "support/unique_fd.hpp"

#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <future>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace board {
namespace {

using catalog_index::IndexLine;
using catalog_index::LogIdentity;

std::int64_t ctime_ns_of(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 +
           static_cast<std::int64_t>(st.st_ctim.tv_nsec);
}

LogIdentity identity_of(const struct stat& st) {
    return LogIdentity{static_cast<std::uint64_t>(st.st_ino),
                       static_cast<std::uint64_t>(st.st_size),
                       ctime_ns_of(st)};
}

/// A whole file mapped read-only, straight from the page cache (no zero-filled buffer, no
/// copy). A writer replaces the index by rename, never in place, so the mapping stays the
/// file this load checks the logs against.
class MappedFile {
public:
    MappedFile(int dir_fd, std::string_view relative) {
        const UniqueFd fd{::openat(dir_fd, std::string{relative}.c_str(), O_RDONLY | O_CLOEXEC)};

        struct stat st {};

        if (!fd || ::fstat(fd.get(), &st) != 0) return;
        opened_ = true;
        if (st.st_size <= 0) return;
        const auto size = static_cast<std::size_t>(st.st_size);
        void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
        if (at == MAP_FAILED) {
            opened_ = false;
            return;
        }
        data_ = static_cast<const char*>(at);
        size_ = size;
    }

    ~MappedFile() {
        if (data_) ::munmap(const_cast<char*>(data_), size_);
    }

    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    /// False when the file could not be opened (missing).
    bool opened() const { return opened_; }

    std::string_view text() const { return {data_ ? data_ : "", size_}; }

private:
    bool opened_ = false;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// `<id>/events.jsonl`, relative to `tickets/`, into `path` (a buffer reused across tickets).
const char* log_path_of(std::string_view id, std::string& path) {
    path.assign(id);
    path += '/';
    path += log_file_name;
    return path.c_str();
}

/// One ticket's entry from a fold of its log; nullopt, with a warning when the log cannot be
/// read, or without one for a ticket whose create has not written its first event yet.
std::optional<CatalogEntry> fold_entry(const fs::path& tickets,
                                       const std::string& id,
                                       std::vector<std::string>& warnings) {
    auto loaded = load_ticket(tickets / id);
    if (const auto* error = std::get_if<LogError>(&loaded)) {
        warnings.push_back(fmt::format("{} left out: {}", id, error->message));
        return std::nullopt;
    }
    auto& ok = std::get<Loaded>(loaded);
    for (auto& w : ok.report.warnings) warnings.push_back(std::move(w));
    if (ok.ticket.id.empty()) return std::nullopt;
    return summarize(ok.ticket);
}

/// One index line as this load finds it, beside its entry.
struct LineState {
    std::string_view text;  ///< the line in the index's mapping; empty for one made by a fold
    LogIdentity recorded;   ///< the log's identity the line was made from
    LogIdentity seen;       ///< the log's identity now, when `found`
    bool parsed = false;    ///< the text is a well-formed line
    bool found = false;     ///< the log exists
    bool believed = false;  ///< the log is provably unchanged since the line was made
};

/// Writes the index: its header with `checked_before`, then one line per entry in id order. A line
/// whose text from the index being replaced is still at hand is copied as it is. A board on a
/// read-only disk still lists: the index is only a cache.
void write_index(const fs::path& tickets,
                 const std::vector<CatalogEntry>& entries,
                 const std::vector<LineState>& lines,
                 std::int64_t checked_before) {
    std::vector<std::size_t> order(entries.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto by_id = [&](std::size_t a, std::size_t b) {
        return id_less(entries[a].ticket.id, entries[b].ticket.id);
    };
    if (!std::is_sorted(order.begin(), order.end(), by_id))
        std::sort(order.begin(), order.end(), by_id);
    std::string text;
    text.reserve(entries.size() * 240 + 128);
    text += catalog_index::header_prefix;
    text += std::to_string(checked_before);
    text += '\n';
    IndexLine line;
    for (const std::size_t i : order) {
        if (!lines[i].text.empty()) {
            text += lines[i].text;
            text += '\n';
            continue;
        }
        line.log = lines[i].recorded;
        line.entry = entries[i];
        catalog_index::append_line(text, line);
    }
    (void)write_file_atomically(tickets / index_file_name, text, Durability::unsynced);
}

/// Keeps the index lines `i` for which `keep(i, kept so far)` holds, in order, in place (the
/// entries and their lines side by side).
template <class Keep>
void keep_lines(std::vector<CatalogEntry>& entries, std::vector<LineState>& lines, Keep keep) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!keep(i, kept)) continue;
        if (kept != i) {
            entries[kept] = std::move(entries[i]);
            lines[kept] = lines[i];
        }
        ++kept;
    }
    entries.resize(kept);
    lines.resize(kept);
}

/// Calls `each(line)` for each line of `text` that ends in a newline, in order; returns false
/// when the text ends in a line without one (torn).
template <class Each>
bool for_each_line(std::string_view text, Each&& each) {
    const char* at = text.data();
    const char* const end = at + text.size();
    while (at < end) {
        const auto* newline =
            static_cast<const char*>(std::memchr(at, '\n', static_cast<std::size_t>(end - at)));
        if (!newline) return false;
        each(std::string_view{at, static_cast<std::size_t>(newline - at)});
        at = newline + 1;
    }
    return true;
}

/// Parses the index's ticket lines into `entries` and `lines`, in file order, and stats each
/// one's log (`tickets_fd`-relative, by the id that starts its line): two jobs at once for a
/// big board, each walking the lines itself. This thread makes each entry and line as it
/// parses, so their memory is written by the one pass that fills it; another stats the logs,
/// the larger share of the work. A line that does not parse, or does not come strictly after
/// the one kept before it in id order (each ticket has at most one line), is dropped: its
/// ticket is folded from its log. Returns true if any line was dropped or the last one is torn.
bool parse_index_lines(std::string_view body,
                       int tickets_fd,
                       std::vector<CatalogEntry>& entries,
                       std::vector<LineState>& lines) {
    // Lines run to 100-300 bytes: a guess at the count from the size, on the high side, for
    // the room reserved (pages never touched cost nothing) and for whether to start a thread.
    const std::size_t about = body.size() / 100 + 16;
    bool torn = false;
    const auto parse_lines = [&] {
        lines.reserve(about);
        entries.reserve(about);
        torn = !for_each_line(body, [&](std::string_view text) {
            LineState& line = lines.emplace_back();
            line.text = text;
            line.parsed =
                catalog_index::parse_line_into(text, line.recorded, entries.emplace_back());
        });
    };

    struct Seen {
        LogIdentity log;
        bool found = false;
    };

    std::vector<Seen> seen;
    const auto stat_logs = [&] {
        seen.reserve(about);
        std::string path;
        path.reserve(64);
        for_each_line(body, [&](std::string_view text) {
            Seen& now = seen.emplace_back();
            // The id the parser takes from the same line: an unparsed line is dropped below.
            const std::string_view id = text.substr(0, text.find('\t'));
            struct stat st {};
            if (!is_valid_ticket_id(id) ||
                ::fstatat(tickets_fd, log_path_of(id, path), &st, 0) != 0)
                return;
            now.found = true;
            now.log = identity_of(st);
        });
    };
    at_once(parse_lines, stat_logs, about > items_worth_a_thread);
    bool dropped = torn;  // a torn index: rebuild what is missing
    if (seen.size() == lines.size()) {
        // The same text split the same way: one stat per line.
        for (std::size_t i = 0; i < lines.size(); ++i) {
            lines[i].found = seen[i].found;
            lines[i].seen = seen[i].log;
        }
    } else {
        // The two walks saw different text (a program wrote the index in place, which no
        // board writer does): no line is believed, every ticket is folded from its log.
        dropped = true;
    }
    keep_lines(entries, lines, [&](std::size_t i, std::size_t kept) {
        const bool keep = lines[i].parsed &&
                          (kept == 0 || id_less(entries[kept - 1].ticket.id, entries[i].ticket.id));
        dropped = dropped || !keep;
        return keep;
    });
    return dropped;
}

/// A ticket to fold, with its log's identity taken before the read: if the log grows
/// meanwhile, the line made from the fold is stale on the next load and folded again, never
/// believed newer than it is.
struct ToFold {
    std::string id;
    LogIdentity log;
};

/// Folds `pending` on two threads when there are many (the first load of a big board).
std::vector<IndexLine> fold_all(const fs::path& tickets,
                                const std::vector<ToFold>& pending,
                                std::vector<std::string>& warnings) {
    std::vector<std::optional<CatalogEntry>> folded(pending.size());
    std::vector<std::vector<std::string>> said(pending.size());
    in_halves(
        pending.size(),
        [&](std::size_t from, std::size_t to) {
            for (std::size_t i = from; i < to; ++i)
                folded[i] = fold_entry(tickets, pending[i].id, said[i]);
        },
        64);
    std::vector<IndexLine> lines;
    lines.reserve(pending.size());
    for (std::size_t i = 0; i < pending.size(); ++i) {
        for (auto& w : said[i]) warnings.push_back(std::move(w));
        if (folded[i]) lines.push_back(IndexLine{pending[i].log, std::move(*folded[i])});
    }
    return lines;
}

}  // namespace

std::optional<std::string> write_snapshot(const fs::path& ticket_dir, const Ticket& ticket) {
    std::string json = encode_ticket(ticket);
    json += '\n';
    auto failed =
        write_file_atomically(ticket_dir / snapshot_file_name, json, Durability::unsynced);
    if (failed.empty()) return std::nullopt;
    return failed;
}

std::variant<CatalogLoad, CatalogError> load_catalog(const fs::path& board_root) {
    const fs::path tickets = board_root / "tickets";
    const UniqueFd tickets_fd{::open(tickets.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (!tickets_fd)
        return CatalogError{
            fmt::format("cannot read {}: {}", tickets.string(), std::strerror(errno))};

    // What the index says, parsed in place in its (id) order into the vector the catalog will
    // own, each line beside its state: its text in the mapping (copied as it is when the index
    // is rewritten) and its log's identity then and now.
    std::vector<CatalogEntry> entries;
    std::vector<LineState> lines;
    const MappedFile index_file{tickets_fd.get(), index_file_name};

    // Which folders of tickets/ are named like tickets, listed on a thread of its own while the
    // index is parsed and the logs are statted (none of that needs the listing until step 2).
    // The index is opened first: an index is replaced whole by a rename, so every ticket the
    // opened one names had its folder before the listing began.
    struct Listing {
        std::vector<std::string> names;
        int error = 0;  ///< errno of a listing that failed
    };

    const auto list_ticket_names = [&tickets_fd] {
        Listing out;
        struct stat st {};

        // A folder's links are its subfolders plus two: about as many names as will come.
        if (::fstat(tickets_fd.get(), &st) == 0 && st.st_nlink > 2)
            out.names.reserve(static_cast<std::size_t>(st.st_nlink - 2));
        const int listing_fd = ::fcntl(tickets_fd.get(), F_DUPFD_CLOEXEC, 0);
        DIR* dir = listing_fd < 0 ? nullptr : ::fdopendir(listing_fd);
        if (!dir) {
            out.error = errno;
            if (listing_fd >= 0) ::close(listing_fd);
            return out;
        }
        errno = 0;
        while (const dirent* item = ::readdir(dir)) {
            const std::string_view name{item->d_name};
            if (is_valid_ticket_id(name)) out.names.emplace_back(name);
        }
        out.error = errno;  // readdir's end and its failure differ only here
        ::closedir(dir);
        return out;
    };
    std::future<Listing> listing;
    try {
        listing = std::async(std::launch::async, list_ticket_names);
    } catch (const std::system_error&) {
        // No thread to be had: listed here when it is needed.
        listing = std::async(std::launch::deferred, list_ticket_names);
    }

    // Read before any log is statted: a log changed after its stat has a ctime at or after it.
    const std::int64_t checked_before = file_times_from_now_ns();

    // 1. Every indexed ticket's log, statted as its line is parsed and checked against the
    //    line. A line is believed only while its log's inode, size and ctime are what the line
    //    records, and only if that ctime is before the time the index was checked under: a log
    //    changed in the same clock tick as it was statted (git's "racily clean" entries) could
    //    differ with the same identity, so it is folded again.
    bool index_dirty = !index_file.opened();
    std::int64_t index_checked_before = 0;  // no line changed at or after it is believed
    if (index_file.opened()) {
        std::string_view body = index_file.text();
        const auto header_end = body.find('\n');
        const bool ours =
            body.starts_with(catalog_index::header_prefix) && header_end != std::string_view::npos;
        const auto checked = ours ? body.substr(catalog_index::header_prefix.size(),
                                                header_end - catalog_index::header_prefix.size())
                                  : std::string_view{};
        const auto [end, ec] =
            std::from_chars(checked.data(), checked.data() + checked.size(), index_checked_before);
        if (!ours || ec != std::errc{} || end != checked.data() + checked.size()) {
            index_dirty = true;  // another version's index, or not an index: rebuilt whole
        } else {
            body.remove_prefix(header_end + 1);
            if (parse_index_lines(body, tickets_fd.get(), entries, lines)) index_dirty = true;
        }
    }
    std::vector<ToFold> pending;
    std::size_t present = 0;
    bool all_believed = true;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        LineState& line = lines[i];
        line.believed =
            line.found && line.recorded == line.seen && line.seen.ctime_ns < index_checked_before;
        all_believed = all_believed && line.believed;
        if (!line.found) continue;
        ++present;
        if (!line.believed) pending.push_back(ToFold{entries[i].ticket.id, line.seen});
    }

    // 2. Tickets the index does not know. Each indexed ticket found in step 1 is a folder of
    //    tickets/, so when the folder holds exactly as many ticket names as step 1 found, it
    //    holds no other and no name needs a lookup. Otherwise each unknown name with a log is
    //    folded (a folder without a log yet is a create in progress: skipped). The one case
    //    the count cannot see is a ticket folder removed (no board command does) while
    //    another is created, both during this load: the next load, its count no longer
    //    matching, finds it.
    const Listing listed = listing.get();
    if (listed.error != 0)
        return CatalogError{
            fmt::format("cannot list {}: {}", tickets.string(), std::strerror(listed.error))};
    const std::vector<std::string>& names = listed.names;
    if (names.size() != present) {
        std::string log;
        for (const std::string& name : names) {
            // The kept lines are in id order: their entries are their own index.
            if (const auto at = catalog_detail::position_in(entries, name);
                at != entries.end() && at->ticket.id == name &&
                lines[static_cast<std::size_t>(at - entries.begin())].found)
                continue;  // seen in step 1

            struct stat st {};

            if (::fstatat(tickets_fd.get(), log_path_of(name, log), &st, 0) != 0) continue;
            pending.push_back(ToFold{name, identity_of(st)});
        }
    }

    CatalogLoad load;
    std::vector<IndexLine> folded = fold_all(tickets, pending, load.warnings);
    load.rebuilt = static_cast<int>(folded.size());
    if (!pending.empty() || !all_believed) {
        index_dirty = true;  // tickets gone, changed or left out: drop their old lines
        keep_lines(entries, lines, [&](std::size_t i, std::size_t) { return lines[i].believed; });
    }
    // One allocation of the final size: growing by doubling held two copies of a big board.
    if (!folded.empty()) {
        entries.reserve(entries.size() + folded.size());
        lines.reserve(entries.capacity());
    }
    for (auto& line : folded) {
        entries.push_back(std::move(line.entry));
        LineState& made = lines.emplace_back();  // by this load's fold: no text to copy
        made.recorded = made.seen = line.log;
        made.parsed = made.found = made.believed = true;
    }
    if (index_dirty) write_index(tickets, entries, lines, checked_before);
    load.catalog = Catalog{std::move(entries)};
    return load;
}

}  // namespace board
