#pragma once
// Artifacts (spec/storage.md): Markdown files in the ticket folder with optional YAML front
// matter (`status: in-progress|complete`, `summary: ...`). The daemon reads the one a run
// wrote and records it with its SHA-256; anything that writes one does so atomically
// (write_file_atomically, src/support/files.hpp).

#include <board/ticket.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board {

/// What an artifact's front matter says. A file without front matter has neither field.
struct FrontMatter {
    std::optional<ArtifactStatus> status;  ///< only in-progress or complete are accepted
    std::string summary;
    /// One line each for what was ignored, e.g. `front matter line 2: status "done" is not
    /// one of in-progress, complete`. Never fatal: a person wrote the file.
    std::vector<std::string> warnings;
};

/// Parses the front matter at the start of `markdown`: a first line `---`, YAML lines, and a
/// closing `---` (or `...`). Unknown keys are kept out of the result without a warning (people
/// add their own); malformed YAML is a warning. Never throws.
FrontMatter parse_front_matter(std::string_view markdown);

/// An artifact file as read from disk.
struct ArtifactRead {
    FrontMatter front_matter;
    std::string sha256;  ///< hex digest of the whole file
    std::uintmax_t bytes = 0;
};

/// Reads `file` (at most `max_bytes`; a larger file is an error, as is a missing one).
/// Returns nullopt and sets `error` to one sentence naming the path otherwise.
std::optional<ArtifactRead> read_artifact(const std::filesystem::path& file,
                                          std::string& error,
                                          std::uintmax_t max_bytes = 64u << 20);

}  // namespace board
