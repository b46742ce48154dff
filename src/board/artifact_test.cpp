#include "support/files.hpp"

#include <board/artifact.hpp>
#include <board/sha256.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace board;
namespace fs = std::filesystem;

TEST_CASE("front matter gives the artifact's status and summary") {
    const auto fm =
        parse_front_matter("---\nstatus: complete\nsummary: Uploads retry on 502\n---\n# Body\n");
    REQUIRE(fm.status == ArtifactStatus::complete);
    CHECK(fm.summary == "Uploads retry on 502");
    CHECK(fm.warnings.empty());
    CHECK(parse_front_matter("---\nstatus: in-progress\n---\n").status ==
          ArtifactStatus::in_progress);
}

TEST_CASE("a file without front matter has no status and no warning") {
    for (const char* text : {"# Research\n\nstatus: complete\n", "", "--- \n"}) {
        const auto fm = parse_front_matter(text);
        CHECK_FALSE(fm.status.has_value());
    }
    CHECK(parse_front_matter("# Research\n").warnings.empty());
}

TEST_CASE("bad front matter is a warning naming the line, never an error") {
    const auto bad_status = parse_front_matter("---\nsummary: x\nstatus: done\n---\n");
    CHECK_FALSE(bad_status.status.has_value());
    REQUIRE(bad_status.warnings.size() == 1);
    CHECK(bad_status.warnings[0] ==
          "front matter line 3: status \"done\" is not one of in-progress, complete");

    const auto unclosed = parse_front_matter("---\nstatus: complete\n# no end\n");
    CHECK_FALSE(unclosed.status.has_value());
    CHECK(unclosed.warnings.size() == 1);

    const auto broken = parse_front_matter("---\nstatus: [complete\n---\n");
    CHECK_FALSE(broken.status.has_value());
    REQUIRE(broken.warnings.size() == 1);
    CHECK(broken.warnings[0].find("not valid YAML") != std::string::npos);
}

TEST_CASE("CRLF files and a byte order mark are read") {
    const auto fm =
        parse_front_matter("\xEF\xBB\xBF---\r\nstatus: complete\r\nsummary: s\r\n---\r\nbody");
    CHECK(fm.status == ArtifactStatus::complete);
    CHECK(fm.summary == "s");
}

TEST_CASE("an artifact is written atomically and read back with its hash") {
    const auto dir = fs::temp_directory_path() / ("board-artifact-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto file = dir / "plan.md";
    const std::string content = "---\nstatus: complete\nsummary: two steps\n---\n1. a\n2. b\n";
    REQUIRE(write_file_atomically(file, "old") == "");
    REQUIRE(write_file_atomically(file, content) == "");
    std::string error;
    const auto read = read_artifact(file, error);
    REQUIRE(read.has_value());
    CHECK(read->sha256 == sha256_hex(content));
    CHECK(read->front_matter.summary == "two steps");
    CHECK(read->bytes == content.size());
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
    CHECK(entries == 1);  // no temp file left behind

    CHECK_FALSE(read_artifact(dir / "missing.md", error).has_value());
    CHECK(error.find("missing.md") != std::string::npos);
    CHECK_FALSE(read_artifact(file, error, 10).has_value());
    CHECK(error.find("more than the 10") != std::string::npos);
    CHECK(write_file_atomically(dir / "no-such-dir" / "x.md", "x").find("no-such-dir") !=
          std::string::npos);
    fs::remove_all(dir);
}
