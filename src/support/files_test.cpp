#include "support/files.hpp"

#include "support/unique_fd.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace board;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
    const auto dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::size_t entries_in(const fs::path& dir) {
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
    return entries;
}

}  // namespace

TEST_CASE("a file is replaced whole, with no temp file left behind", "[files]") {
    const auto dir = fresh_dir("board-files");
    const auto file = dir / "plan.md";
    for (const auto durability : {Durability::synced, Durability::unsynced}) {
        REQUIRE(write_file_atomically(file, "old", durability) == "");
        REQUIRE(write_file_atomically(file, "new content\n", durability) == "");
        CHECK(read_whole_file(file) == "new content\n");
        CHECK(entries_in(dir) == 1);
    }
    const auto error = write_file_atomically(dir / "no-such-dir" / "x.md", "x");
    CHECK(error.find("no-such-dir") != std::string::npos);
    CHECK(error.find("No such file") != std::string::npos);
    CHECK(entries_in(dir) == 1);
    fs::remove_all(dir);
}

TEST_CASE("a whole file is read relative to a folder, or not at all", "[files]") {
    const auto dir = fresh_dir("board-read");
    REQUIRE(write_file_atomically(dir / "a.txt", std::string(100'000, 'x')) == "");
    UniqueFd folder{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    REQUIRE(folder);
    CHECK(read_whole_file("a.txt", folder.get())->size() == 100'000);
    CHECK_FALSE(read_whole_file("missing.txt", folder.get()));
    // A link at the name itself is followed unless refused.
    fs::create_symlink("a.txt", dir / "link.txt");
    CHECK(read_whole_file("link.txt", folder.get())->size() == 100'000);
    CHECK_FALSE(read_whole_file("link.txt", folder.get(), 1u << 20, LinkAtName::refused));
    CHECK(read_whole_file("a.txt", folder.get(), 1u << 20, LinkAtName::refused)->size() == 100'000);
    // A file that says it is empty but is not (as /proc files do) is still read whole.
    const auto cmdline = read_whole_file("/proc/self/cmdline");
    REQUIRE(cmdline);
    CHECK_FALSE(cmdline->empty());
    fs::remove_all(dir);
}

TEST_CASE("an fd holder closes once, and hands its fd over on a move", "[files]") {
    int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(raw >= 0);
    {
        UniqueFd first{raw};
        UniqueFd second{std::move(first)};
        CHECK_FALSE(first);
        CHECK(second.get() == raw);
        CHECK(::fcntl(raw, F_GETFD) >= 0);
    }
    CHECK(::fcntl(raw, F_GETFD) == -1);  // closed by the holder that had it last
}
