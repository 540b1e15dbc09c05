// HtmlEscape: text made safe to place in an HTML (or XML) element or a quoted attribute value,
// with XML's predefined entities only, so that a page built with it stays parseable as XML.
// What the drift report and the cases' report drafts write about payments and analysts' text.
//
// Thread safety: a pure function.
#ifndef VIGIL_COMMON_HTML_ESCAPE_H_
#define VIGIL_COMMON_HTML_ESCAPE_H_

#include <string>
#include <string_view>

namespace vigil {

std::string HtmlEscape(std::string_view text);

}  // namespace vigil

#endif  // VIGIL_COMMON_HTML_ESCAPE_H_
