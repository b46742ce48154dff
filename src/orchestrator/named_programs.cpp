#include "orchestrator/named_programs.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_set>

namespace board::orchestrator {
namespace fs = std::filesystem;

std::vector<fs::path> paths_named_in(std::string_view text, const fs::path& home) {
    constexpr std::string_view word_ends = " \t\r\n\"'\\=,;|&()[]<>`";
    constexpr std::array<std::string_view, 3> home_forms{"~/", "$HOME/", "${HOME}/"};
    std::vector<fs::path> named;
    std::unordered_set<std::string> seen;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t start = text.find_first_not_of(word_ends, at);
        if (start == std::string_view::npos) break;
        const std::size_t end = std::min(text.find_first_of(word_ends, start), text.size());
        const std::string_view word = text.substr(start, end - start);
        at = end;
        fs::path path;
        if (word.starts_with('/')) {
            path = std::string{word};
        } else if (!home.empty()) {
            for (const std::string_view form : home_forms)
                if (word.starts_with(form)) path = home / std::string{word.substr(form.size())};
        }
        if (path.empty()) continue;
        path = path.lexically_normal();
        if (!path.has_filename() || path == path.root_path()) continue;
        if (seen.insert(path.string()).second) named.push_back(std::move(path));
    }
    return named;
}

}  // namespace board::orchestrator
