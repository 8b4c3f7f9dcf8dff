// The geometry playground's sparse-recovery toy: one bar chart per shown optimizer (its end point over the truth),
// and the table of each end point's norms, support and errors beside the truth's.
#include "widgets/geometry_playground.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "widgets/playground_drawing.h"

namespace descentlab::widgets {
namespace {

bool anyDiverged(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double value) { return isDiverged(value); });
}

}  // namespace

// The sparse toy: one bar chart per shown optimizer (its end point over the grey truth), as many side by side as
// their titles allow, then the norms table; the whole scrolls when it does not fit.
void GeometryPlayground::drawSparse() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float em = ImGui::GetFontSize();
  ImGui::BeginChild("sparse", ImVec2(0, 0), false);
  drawCaption();
  const auto names = backend_.methods();
  std::vector<size_t> shown;
  for (size_t m = 0; m < names.size() && m < sparse_.size(); ++m) {
    if (shown_[m]) shown.push_back(m);
  }
  auto titleOf = [&](size_t m) { return anyDiverged(sparse_[m].coefficients) ? names[m] + " (diverged)" : names[m]; };
  const float swatch = std::round(em * 0.8f);
  float widestTitle = 0;
  for (const size_t m : shown)
    widestTitle = std::max(widestTitle, swatch + style.ItemInnerSpacing.x + textWidth(titleOf(m)));
  const ImVec2 available = ImGui::GetContentRegionAvail();
  const float gap = std::round(em * 0.6f);
  const float chartMinW = std::max(9 * em, widestTitle + em);
  const int columns = std::clamp(static_cast<int>((available.x + gap) / (chartMinW + gap)), 1, 4);
  const int rows = (static_cast<int>(shown.size()) + columns - 1) / columns;
  const auto tableRows = sparseTableRows();
  const float tableRowH = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const bool tableScrolls = sparseTableWidth(tableRows) > available.x;  // then a scroll bar below the rows
  const float tableH =
      static_cast<float>(tableRows.size() + 1) * tableRowH + (tableScrolls ? style.ScrollbarSize : 0) + 4;
  const float titleH = ImGui::GetTextLineHeightWithSpacing();
  const float chartW = (available.x - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns);
  const float fitH =
      rows > 0 ? (available.y - tableH - style.ItemSpacing.y) / static_cast<float>(rows) - titleH - gap : 0.0f;
  const float boxH = std::clamp(fitH, 4 * em, 14 * em);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(available.x, static_cast<float>(rows) * (titleH + boxH + gap)));

  double largest = 0;
  for (double t : truth_) largest = std::max(largest, std::abs(t));
  for (const auto& outcome : sparse_) {
    for (double c : outcome.coefficients) {
      if (std::isfinite(c)) largest = std::max(largest, std::min(std::abs(c), 3.0 * largest + 1e-9));
    }
  }
  largest = std::max(largest, 1e-9);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (size_t slot = 0; slot < shown.size(); ++slot) {
    const size_t m = shown[slot];
    const float x0 = origin.x + static_cast<float>(static_cast<int>(slot) % columns) * (chartW + gap);
    const float y0 = origin.y + static_cast<float>(static_cast<int>(slot) / columns) * (titleH + boxH + gap);
    // The title above its chart, never over the bars or the next chart.
    draw->PushClipRect(ImVec2(x0, y0), ImVec2(x0 + chartW, y0 + titleH), true);
    draw->AddRectFilled(ImVec2(x0, y0 + (em - swatch) * 0.5f), ImVec2(x0 + swatch, y0 + (em + swatch) * 0.5f),
                        methodColour(m));
    drawText(ImVec2(x0 + swatch + style.ItemInnerSpacing.x, y0), kTextColour, titleOf(m));
    draw->PopClipRect();
    const float top = y0 + titleH, w = chartW, h = boxH;
    draw->AddRect(ImVec2(x0, top), ImVec2(x0 + w, top + h), IM_COL32(200, 200, 200, 255));
    const float mid = top + h * 0.5f;
    const float scale = (h * 0.5f - 4) / static_cast<float>(largest);
    draw->AddLine(ImVec2(x0, mid), ImVec2(x0 + w, mid), IM_COL32(160, 160, 160, 255));
    const auto& coefficients = sparse_[m].coefficients;
    const float bar = w / static_cast<float>(std::max<size_t>(1, truth_.size()));
    for (size_t i = 0; i < truth_.size(); ++i) {
      const float x = x0 + (static_cast<float>(i) + 0.5f) * bar;
      if (truth_[i] != 0.0) {  // the truth: a grey bar behind
        draw->AddRectFilled(ImVec2(x - bar * 0.45f, mid),
                            ImVec2(x + bar * 0.45f, mid - static_cast<float>(truth_[i]) * scale),
                            IM_COL32(190, 190, 190, 255));
      }
      if (i < coefficients.size() && std::isfinite(coefficients[i])) {
        const double value = std::clamp(coefficients[i], -1.05 * largest, 1.05 * largest);
        draw->AddLine(ImVec2(x, mid), ImVec2(x, mid - static_cast<float>(value) * scale), methodColour(m),
                      std::max(1.5f, bar * 0.5f));
      }
    }
  }
  // The table's rows below the child's view are scrolled away by the child, not cut by the table.
  ancestorScrollsY_ = ImGui::GetScrollMaxY() > 0;
  sparseTable(tableH, tableRows);
  ancestorScrollsY_ = false;
  ImGui::EndChild();
}

// The table's text: the truth's row, then each shown optimizer's.
std::vector<GeometryPlayground::TableRow> GeometryPlayground::sparseTableRows() const {
  auto rowOf = [](const std::string& name, unsigned colour, const SparseOutcome& outcome, bool diverged) {
    TableRow row;
    row.colour = colour;
    row.cells = {name,
                 formatPlaygroundNumber(outcome.l1),
                 formatPlaygroundNumber(outcome.l2),
                 formatPlaygroundNumber(outcome.linf),
                 diverged ? "-" : std::to_string(outcome.support_found),
                 diverged ? "-" : std::to_string(outcome.support_correct),
                 formatPlaygroundNumber(outcome.error),
                 formatPlaygroundNumber(outcome.loss)};
    return row;
  };
  SparseOutcome truth;
  int nonzeros = 0;
  for (double t : truth_) {
    truth.l1 += std::abs(t);
    truth.l2 += t * t;
    truth.linf = std::max(truth.linf, std::abs(t));
    nonzeros += t != 0.0 ? 1 : 0;
  }
  truth.l2 = std::sqrt(truth.l2);
  truth.support_found = truth.support_correct = nonzeros;
  std::vector<TableRow> rows = {rowOf("truth", IM_COL32(190, 190, 190, 255), truth, false)};  // the charts' grey
  const auto names = backend_.methods();
  for (size_t m = 0; m < names.size() && m < sparse_.size(); ++m) {
    if (shown_[m]) rows.push_back(rowOf(names[m], methodColour(m), sparse_[m], anyDiverged(sparse_[m].coefficients)));
  }
  return rows;
}

// The width the table takes with every column fitted to its widest cell (a little over, never under).
float GeometryPlayground::sparseTableWidth(const std::vector<TableRow>& rows) const {
  const ImGuiStyle& style = ImGui::GetStyle();
  float total = 1;
  for (size_t column = 0; column < kTableHeaders.size(); ++column) {
    float widest = textWidth(kTableHeaders[column]);
    for (const auto& row : rows) {
      const float swatch = column == 0 ? std::round(ImGui::GetFontSize() * 0.8f) + style.ItemInnerSpacing.x : 0;
      widest = std::max(widest, swatch + textWidth(row.cells[column]));
    }
    total += widest + 2 * style.CellPadding.x + 4;
  }
  return total;
}

// The norms, support and errors of each end point beside the truth's. Columns fit their widest cell and the table
// scrolls sideways (the optimizer column stays) rather than squeeze them.
void GeometryPlayground::sparseTable(float height, const std::vector<TableRow>& rows) {
  static const char* const kTips[] = {"the optimizer (its colour in the charts)",
                                      "L1 norm of the end point: small for sparse answers",
                                      "L2 norm of the end point: gradient descent's implicit bias minimises it",
                                      "largest magnitude of the end point",
                                      "support found: entries with |x_i| > 0.1 max |x|",
                                      "of the support found, entries the truth has too",
                                      "L2 distance from the truth",
                                      "the least-squares loss at the end point"};
  const int columns = static_cast<int>(kTableHeaders.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoSavedSettings;
  if (!ImGui::BeginTable("norms", columns, flags, ImVec2(0, height))) return;
  currentTable_ = "norms";
  ImGui::TableSetupScrollFreeze(1, 0);
  for (const char* header : kTableHeaders) ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
  for (int column = 0; column < columns; ++column) {
    ImGui::TableSetColumnIndex(column);
    const char* header = kTableHeaders[static_cast<size_t>(column)];
    const float room = ImGui::GetContentRegionAvail().x;
    const ImVec2 label = ImGui::GetCursorScreenPos();  // where TableHeader draws its label
    ImGui::TableHeader(header);
    const ImVec2 size = ImGui::CalcTextSize(header);
    record_.cells.push_back({currentTable_, header, column, size.x, room});
    recordText(header, label, offset(label, size.x, size.y));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kTips[column]);
  }
  for (const auto& row : rows) {
    ImGui::TableNextRow();
    currentColumn_ = 0;
    ImGui::PushID(row.cells[0].c_str());
    tableCell(row.cells[0], row.colour, false);
    ImGui::PopID();
    for (size_t column = 1; column < row.cells.size(); ++column) tableCell(row.cells[column], 0, true);
  }
  ImGui::EndTable();
}

// One cell of the current table row, numbers aligned right, recorded with its column's width; a name follows a
// swatch of its colour (dark text reads better than pale colours on the striped rows).
void GeometryPlayground::tableCell(const std::string& text, unsigned colour, bool alignRight) {
  ImGui::TableNextColumn();
  float room = ImGui::GetContentRegionAvail().x;
  if (colour != 0) {
    const float swatch = std::round(ImGui::GetFontSize() * 0.8f);
    ImGui::ColorButton("##c", toVec4(colour), ImGuiColorEditFlags_NoTooltip, ImVec2(swatch, swatch));
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    room -= swatch + ImGui::GetStyle().ItemInnerSpacing.x;
  }
  const float width = textWidth(text);
  if (alignRight && room > width) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + room - width);
  ImGui::TextUnformatted(text.c_str());
  record_.cells.push_back({currentTable_, text, currentColumn_++, width, room});
  recordItem(text);
}

}  // namespace descentlab::widgets
