// fmt's compiled part, built into the `board` executable (see CMakeLists.txt: Debian 12 ships
// libfmt only as a shared library, and loading it drags libstdc++.so and its relocations into
// every `board` process). This is fmt 9.1's src/format.cc: the non-template functions of
// format-inl.h and the explicit instantiations format.h declares `extern`. With every fmt
// symbol defined here, `--as-needed` drops libfmt.so from the executable.

#include <fmt/format-inl.h>

// fmt's own code, as upstream writes it: not held to this project's lint rules.
// NOLINTBEGIN

FMT_BEGIN_NAMESPACE

namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&,
                                 string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail

FMT_END_NAMESPACE
// NOLINTEND
