#pragma once
// The web page's files (src/http/web/), compiled in at configure time (web_assets.cpp.in) so
// an installed daemon needs no data folder.

#include <optional>
#include <string_view>

namespace board::http {

struct WebAsset {
    std::string_view content_type;
    std::string_view body;
};

/// The file served at `path` (`/` is index.html), or nullopt: only these files, no listing.
std::optional<WebAsset> web_asset(std::string_view path);

}  // namespace board::http
