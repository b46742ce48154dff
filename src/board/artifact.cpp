// Artifact files: front matter, hashing, atomic writes.

#include <board/artifact.hpp>
#include <board/sha256.hpp>

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace board {
namespace {

/// The line starting at `pos` without its `\n` (and without a trailing `\r`).
std::string_view line_at(std::string_view text, std::size_t pos, std::size_t& next) {
    const auto end = text.find('\n', pos);
    next = end == std::string_view::npos ? text.size() : end + 1;
    auto line = text.substr(pos, (end == std::string_view::npos ? text.size() : end) - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
}

bool is_fence(std::string_view line, bool closing) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    return line == "---" || (closing && line == "...");
}

}  // namespace

FrontMatter parse_front_matter(std::string_view markdown) {
    FrontMatter result;
    if (markdown.substr(0, 3) == "\xEF\xBB\xBF") markdown.remove_prefix(3);  // a BOM
    std::size_t pos = 0;
    if (!is_fence(line_at(markdown, 0, pos), false)) return result;
    const std::size_t yaml_begin = pos;
    std::size_t yaml_end = std::string_view::npos;
    while (pos < markdown.size()) {
        std::size_t next = 0;
        const auto line = line_at(markdown, pos, next);
        if (is_fence(line, true)) {
            yaml_end = pos;
            break;
        }
        pos = next;
    }
    if (yaml_end == std::string_view::npos) {
        result.warnings.emplace_back(
            "front matter: no closing --- line; the file is read as "
            "having no front matter");
        return result;
    }
    YAML::Node root;
    try {
        root = YAML::Load(std::string{markdown.substr(yaml_begin, yaml_end - yaml_begin)});
    } catch (const YAML::Exception& e) {
        result.warnings.push_back("front matter line " + std::to_string(e.mark.line + 2) +
                                  ": not valid YAML (" + e.msg + ")");
        return result;
    }
    if (!root.IsMap()) {
        if (!root.IsNull()) result.warnings.emplace_back("front matter: expected key: value lines");
        return result;
    }
    try {
        if (const auto status = root["status"]; status && status.IsScalar()) {
            const auto text = status.Scalar();
            if (text == "complete") {
                result.status = ArtifactStatus::complete;
            } else if (text == "in-progress" || text == "in_progress") {
                result.status = ArtifactStatus::in_progress;
            } else {
                result.warnings.push_back("front matter line " +
                                          std::to_string(status.Mark().line + 2) + ": status \"" +
                                          text + "\" is not one of in-progress, complete");
            }
        }
        if (const auto summary = root["summary"]; summary && summary.IsScalar()) {
            result.summary = summary.Scalar();
        }
    } catch (const YAML::Exception& e) {
        result.warnings.push_back("front matter: " + e.msg);
    }
    return result;
}

std::optional<ArtifactRead> read_artifact(const std::filesystem::path& file,
                                          std::string& error,
                                          std::uintmax_t max_bytes) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) {
        error = file.string() + ": " + ec.message();
        return std::nullopt;
    }
    if (size > max_bytes) {
        error = file.string() + ": " + std::to_string(size) + " bytes, more than the " +
                std::to_string(max_bytes) + " an artifact may have";
        return std::nullopt;
    }
    std::ifstream in(file, std::ios::binary);
    std::string content;
    content.resize(static_cast<std::size_t>(size));
    if (!in || !in.read(content.data(), static_cast<std::streamsize>(content.size()))) {
        error = file.string() + ": could not be read";
        return std::nullopt;
    }
    ArtifactRead read;
    read.front_matter = parse_front_matter(content);
    read.sha256 = sha256_hex(content);
    read.bytes = size;
    return read;
}

}  // namespace board
