#include "event_log/posix_file.hpp"

#include <board/write_generation.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace board {
namespace {

// The file: nonce, counter, then touch_slot_count slots of 8 words. A slot: its bump's number
// (0 while being written), 48 bytes of payload (the side, then the ticket id NUL-padded) and
// a check word over the number and the payload.
constexpr std::size_t header_words = 2;
constexpr std::size_t slot_words = 8;
constexpr std::size_t payload_words = slot_words - 2;
constexpr std::size_t id_capacity = payload_words * sizeof(std::uint64_t) - 1;
constexpr std::size_t file_words = header_words + touch_slot_count * slot_words;
constexpr std::size_t file_size = file_words * sizeof(std::uint64_t);
// Processes share the file through the page cache: only lock-free atomics work there.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

std::uint64_t* slot_of(std::uint64_t* words, std::uint64_t number) {
    return words + header_words + ((number - 1) % touch_slot_count) * slot_words;
}

/// A slot's check word. Bumps `n` and `n + touch_slot_count` share a slot, and a writer that
/// stalls mid-slot can mix its words into the next one's: the check tells such a slot from a
/// whole one (splitmix64's finalizer over each word in turn).
std::uint64_t slot_check(std::uint64_t number, const std::uint64_t (&payload)[payload_words]) {
    const auto mix = [](std::uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    std::uint64_t check = mix(number + 0x9e3779b97f4a7c15ULL);
    for (const std::uint64_t word : payload) check = mix(check ^ word);
    return check;
}

/// Writes bump `number`'s slot, seqlock-style: a reader that sees the same number before and
/// after copying the payload, and a check word that matches it, has a whole one.
void write_slot(std::uint64_t* words,
                std::uint64_t number,
                std::string_view ticket,
                BumpSide side) {
    std::uint64_t payload[payload_words] = {};
    auto* bytes = reinterpret_cast<unsigned char*>(payload);
    bytes[0] = static_cast<unsigned char>(side);
    if (ticket.size() <= id_capacity) std::memcpy(bytes + 1, ticket.data(), ticket.size());
    std::uint64_t* slot = slot_of(words, number);
    std::atomic_ref<std::uint64_t>{slot[0]}.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t i = 0; i < payload_words; ++i)
        std::atomic_ref<std::uint64_t>{slot[i + 1]}.store(payload[i], std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>{slot[slot_words - 1]}.store(slot_check(number, payload),
                                                               std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>{slot[0]}.store(number, std::memory_order_release);
}

struct SlotRead {
    BumpSide side = BumpSide::touch;
    std::string ticket;  ///< empty: any log
};

/// Bump `number`'s slot, or nullopt if it holds another bump, is being written, or is not
/// whole (see slot_check).
std::optional<SlotRead> read_slot(std::uint64_t* words, std::uint64_t number) {
    std::uint64_t* slot = slot_of(words, number);
    if (std::atomic_ref<std::uint64_t>{slot[0]}.load(std::memory_order_acquire) != number)
        return std::nullopt;
    std::uint64_t payload[payload_words];
    for (std::size_t i = 0; i < payload_words; ++i)
        payload[i] = std::atomic_ref<std::uint64_t>{slot[i + 1]}.load(std::memory_order_relaxed);
    const std::uint64_t check =
        std::atomic_ref<std::uint64_t>{slot[slot_words - 1]}.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (std::atomic_ref<std::uint64_t>{slot[0]}.load(std::memory_order_relaxed) != number ||
        check != slot_check(number, payload))
        return std::nullopt;
    const auto* bytes = reinterpret_cast<const char*>(payload);
    SlotRead read;
    switch (static_cast<BumpSide>(bytes[0])) {
        case BumpSide::before:
        case BumpSide::after:
        case BumpSide::touch:
            read.side = static_cast<BumpSide>(bytes[0]);
            break;
        default:
            return std::nullopt;
    }
    read.ticket.assign(bytes + 1, ::strnlen(bytes + 1, id_capacity));
    return read;
}

/// Follows the changes the slots show: each `after` ends the oldest open `before` of its
/// ticket; a `touch` neither opens nor ends one.
class OpenChanges {
public:
    void add(std::uint64_t number, const SlotRead& slot) {
        if (slot.side == BumpSide::touch) return;
        auto& open = open_[slot.ticket];
        if (slot.side == BumpSide::before)
            open.push_back(number);
        else if (!open.empty())
            open.erase(open.begin());
    }

    /// A bump whose slot cannot be read: it may be the start of a change, so it counts as
    /// one that has not ended.
    void add_unknown(std::uint64_t number) { unknown_ = std::min(unknown_, number); }

    /// The highest counter below every change still open, or `until` when none is.
    std::uint64_t settled(std::uint64_t until) const {
        std::uint64_t settled = until;
        for (const auto& [ticket, open] : open_)
            if (!open.empty()) settled = std::min(settled, open.front() - 1);
        if (unknown_ != no_unknown) settled = std::min(settled, unknown_ - 1);
        return settled;
    }

private:
    static constexpr std::uint64_t no_unknown = ~std::uint64_t{0};
    std::map<std::string, std::vector<std::uint64_t>> open_;
    std::uint64_t unknown_ = no_unknown;
};

/// Writes a whole new generation file beside `path` and links it into place; losing the race
/// to another writer is fine (theirs is as good). Best effort: a failure leaves no file.
void create_generation_file(const std::string& path) {
    std::vector<std::uint64_t> content(file_words, 0);  // an empty ring: no slot has a number
    event_log_detail::random_words(std::span{content}.first(1));  // the nonce
    const std::string temp = path + "." + std::to_string(::getpid()) + "." +
                             std::to_string(content[0] & 0xffffff) + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const bool written = ::write(fd, content.data(), file_size) == static_cast<ssize_t>(file_size);
    ::close(fd);
    if (written) (void)::link(temp.c_str(), path.c_str());
    ::unlink(temp.c_str());
}

/// A generation file mapped once per process and kept: a daemon bumps twice per append, and
/// one stat per bump (to notice a file removed and made again) costs a fifth of opening and
/// mapping it each time.
struct MappedGeneration {
    std::string path;
    dev_t device = 0;
    ino_t inode = 0;
    std::uint64_t* counter = nullptr;
};

std::mutex mapped_mutex;

std::vector<MappedGeneration>& mapped_generations() {
    static auto* const mapped = new std::vector<MappedGeneration>;  // kept until exit
    return *mapped;
}

/// Maps the generation file open as `fd` (and closes it), if it has the size of one;
/// nullptr otherwise.
std::uint64_t* map_whole(int fd, int protection, struct stat& st) {
    void* mapped = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(file_size))
        mapped = ::mmap(nullptr, file_size, protection, MAP_SHARED, fd, 0);
    ::close(fd);
    return mapped == MAP_FAILED ? nullptr : static_cast<std::uint64_t*>(mapped);
}

/// Maps the generation file at `path` for bumping; nullptr if there is none or it cannot be
/// mapped (it is then removed, so readers stop trusting it).
std::uint64_t* map_generation(const std::string& path, struct stat& st) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) ::unlink(path.c_str());
        return nullptr;
    }
    std::uint64_t* words = map_whole(fd, PROT_READ | PROT_WRITE, st);
    if (!words) {
        ::unlink(path.c_str());  // damaged: readers must stop trusting it
        return nullptr;
    }
    return words + 1;
}

}  // namespace

void bump_write_generation(const std::filesystem::path& tickets_dir,
                           std::string_view ticket,
                           BumpSide side) noexcept {
    try {
        const std::string path = (tickets_dir / generation_file_name).string();
        const std::lock_guard lock{mapped_mutex};
        auto& mapped = mapped_generations();
        auto it = std::find_if(mapped.begin(), mapped.end(), [&](const MappedGeneration& m) {
            return m.path == path;
        });

        struct stat st {};

        const bool same_file = it != mapped.end() && ::stat(path.c_str(), &st) == 0 &&
                               st.st_dev == it->device && st.st_ino == it->inode &&
                               st.st_size == static_cast<off_t>(file_size);
        if (!same_file) {
            if (it != mapped.end()) {
                ::munmap(it->counter - 1, file_size);
                mapped.erase(it);
            }
            std::uint64_t* counter = map_generation(path, st);
            if (!counter) return;
            mapped.push_back(MappedGeneration{path, st.st_dev, st.st_ino, counter});
            it = mapped.end() - 1;
        }
        const std::uint64_t number =
            std::atomic_ref<std::uint64_t>{*it->counter}.fetch_add(1, std::memory_order_seq_cst) +
            1;
        write_slot(it->counter - 1, number, ticket, side);
    } catch (...) {
        // Only allocation can throw here; a missed bump must not become a crash. Readers
        // still see the writer's second bump or the next writer's.
    }
}

void start_write_generation(const std::filesystem::path& tickets_dir) noexcept {
    try {
        const std::string path = (tickets_dir / generation_file_name).string();

        struct stat st {};

        if (::stat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) create_generation_file(path);
        } else if (st.st_size != static_cast<off_t>(file_size)) {
            // Files are only ever linked in whole, so this one is damaged or of an older
            // layout (before the ring): readers could never trust it, so it is replaced.
            ::unlink(path.c_str());
            create_generation_file(path);
        }
    } catch (...) {
        // Allocation only: without the file, readers check every log, as before.
    }
}

std::optional<WriteGeneration> read_write_generation(int tickets_fd) noexcept {
    return GenerationView{tickets_fd}.generation();
}

GenerationView::GenerationView(int tickets_fd) noexcept {
    const int fd =
        ::openat(tickets_fd, std::string{generation_file_name}.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;

    struct stat st {};

    words_ = map_whole(fd, PROT_READ, st);
}

GenerationView::~GenerationView() {
    if (words_) ::munmap(words_, file_size);
}

std::optional<WriteGeneration> GenerationView::generation() const noexcept {
    if (!words_) return std::nullopt;
    // Loaded atomically from the mapping the writers add to: a copy by read() could mix the
    // bytes of two counters into an older one.
    return WriteGeneration{
        std::atomic_ref<std::uint64_t>{words_[0]}.load(std::memory_order_seq_cst),
        std::atomic_ref<std::uint64_t>{words_[1]}.load(std::memory_order_seq_cst)};
}

std::optional<Touched> GenerationView::touched(std::uint64_t since, std::uint64_t until) const {
    if (!words_ || until < since || until - since > touch_slot_count) return std::nullopt;
    Touched touched;
    OpenChanges open;
    std::set<std::string> seen;
    for (std::uint64_t number = since + 1; number <= until; ++number) {
        auto slot = read_slot(words_, number);
        if (!slot || slot->ticket.empty()) return std::nullopt;
        open.add(number, *slot);
        if (seen.insert(slot->ticket).second) touched.tickets.push_back(slot->ticket);
    }
    touched.settled = open.settled(until);
    return touched;
}

std::uint64_t GenerationView::settled_after_full_check(std::uint64_t counter) const noexcept {
    if (!words_) return counter;
    try {
        OpenChanges open;
        const std::uint64_t first = counter > touch_slot_count ? counter - touch_slot_count + 1 : 1;
        for (std::uint64_t number = first; number <= counter; ++number) {
            // A slot that does not hold its bump may be a writer's first bump, made before this
            // reader's stats and written after: its change must stay in later windows.
            if (auto slot = read_slot(words_, number))
                open.add(number, *slot);
            else
                open.add_unknown(number);
        }
        return open.settled(counter);
    } catch (...) {
        return 0;  // allocation: record nothing a later reader could build on
    }
}

std::string boot_id() {
    const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    char text[64];
    const ssize_t got = ::read(fd, text, sizeof text);
    ::close(fd);
    if (got <= 0) return {};
    std::string id{text, static_cast<std::size_t>(got)};
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id;
}

}  // namespace board
