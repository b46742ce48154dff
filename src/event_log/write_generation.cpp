#include <board/write_generation.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace board {
namespace {

constexpr std::size_t file_size = 2 * sizeof(std::uint64_t);  // nonce, counter
// Processes share the counter through the page cache: only a lock-free atomic works there.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

std::uint64_t random_nonce() {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

/// Writes a whole new generation file beside `path` and links it into place; losing the race
/// to another writer is fine (theirs is as good). Best effort: a failure leaves no file.
void create_generation_file(const std::string& path) {
    std::uint64_t content[2] = {random_nonce(), 0};
    const std::string temp = path + "." + std::to_string(::getpid()) + "." +
                             std::to_string(content[0] & 0xffffff) + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const bool written = ::write(fd, content, file_size) == static_cast<ssize_t>(file_size);
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

/// Maps the generation file at `path`; nullptr if there is none or it cannot be mapped (it
/// is then removed, so readers stop trusting it).
std::uint64_t* map_generation(const std::string& path, struct stat& st) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) ::unlink(path.c_str());
        return nullptr;
    }
    void* mapped = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(file_size))
        mapped = ::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) {
        ::unlink(path.c_str());  // damaged: readers must stop trusting it
        return nullptr;
    }
    return static_cast<std::uint64_t*>(mapped) + 1;
}

}  // namespace

void bump_write_generation(const std::filesystem::path& tickets_dir) noexcept {
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
        std::atomic_ref<std::uint64_t>{*it->counter}.fetch_add(1, std::memory_order_seq_cst);
    } catch (...) {
        // Only allocation can throw here; a missed bump must not become a crash. Readers
        // still see the writer's second bump or the next writer's.
    }
}

void start_write_generation(const std::filesystem::path& tickets_dir) noexcept {
    try {
        const std::string path = (tickets_dir / generation_file_name).string();
        if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) create_generation_file(path);
    } catch (...) {
        // Allocation only: without the file, readers check every log, as before.
    }
}

std::optional<WriteGeneration> read_write_generation(int tickets_fd) noexcept {
    const int fd =
        ::openat(tickets_fd, std::string{generation_file_name}.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;

    struct stat st {};

    void* mapped = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(file_size))
        mapped = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) return std::nullopt;
    // Loaded atomically from the mapping the writers add to: a copy by read() could mix the
    // bytes of two counters into an older one.
    auto* words = static_cast<std::uint64_t*>(mapped);
    const WriteGeneration generation{
        std::atomic_ref<std::uint64_t>{words[0]}.load(std::memory_order_seq_cst),
        std::atomic_ref<std::uint64_t>{words[1]}.load(std::memory_order_seq_cst)};
    ::munmap(mapped, file_size);
    return generation;
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
