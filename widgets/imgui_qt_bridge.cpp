#include "widgets/imgui_qt_bridge.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QRawFont>
#include <QWheelEvent>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

// Dear ImGui 1.87 takes input as queued events (io.AddMousePosEvent, io.AddKeyEvent...), and 1.89 names the modifier
// keys ImGuiMod_Ctrl...; before, a backend wrote io.MousePos, io.MouseDown[], io.MouseWheel, io.KeyMap[] (once) and
// io.KeysDown[]. Debian 12 ships 1.86, Debian 13 1.90.
#define DESCENTLAB_IMGUI_MOUSE_EVENTS (IMGUI_VERSION_NUM >= 18700)
#define DESCENTLAB_IMGUI_KEY_EVENTS (IMGUI_VERSION_NUM >= 18900)

namespace descentlab::widgets {
namespace {

// The Qt keys ImGui needs, and the ImGui key of each: the one key table.
struct KeyPair {
  int qt;
  ImGuiKey imgui;
};
const KeyPair kKeys[] = {
    {Qt::Key_Tab, ImGuiKey_Tab},
    {Qt::Key_Left, ImGuiKey_LeftArrow},
    {Qt::Key_Right, ImGuiKey_RightArrow},
    {Qt::Key_Up, ImGuiKey_UpArrow},
    {Qt::Key_Down, ImGuiKey_DownArrow},
    {Qt::Key_Home, ImGuiKey_Home},
    {Qt::Key_End, ImGuiKey_End},
    {Qt::Key_Delete, ImGuiKey_Delete},
    {Qt::Key_Backspace, ImGuiKey_Backspace},
    {Qt::Key_Return, ImGuiKey_Enter},
    {Qt::Key_Enter, ImGuiKey_Enter},
    {Qt::Key_Escape, ImGuiKey_Escape},
    {Qt::Key_A, ImGuiKey_A},
    {Qt::Key_C, ImGuiKey_C},
    {Qt::Key_V, ImGuiKey_V},
    {Qt::Key_X, ImGuiKey_X},
};

// The table's row for `qtKey`, or null when ImGui does not use the key.
const KeyPair* findKey(int qtKey) {
  for (const auto& pair : kKeys) {
    if (pair.qt == qtKey) return &pair;
  }
  return nullptr;
}

#if !DESCENTLAB_IMGUI_KEY_EVENTS
// The legacy io.KeysDown[] index of an ImGui key: its offset from the first named key (small, under 512, also in
// 1.87 and 1.88 where named keys start at 512).
int legacyIndex(ImGuiKey key) {
  return static_cast<int>(key) - static_cast<int>(ImGuiKey_Tab);
}
#endif

ImVec2 positionOf(const QMouseEvent& event) {
  return ImVec2(static_cast<float>(event.position().x()), static_cast<float>(event.position().y()));
}

// Big-endian integers, as every sfnt field is stored.
uint32_t readU16(const QByteArray& bytes, int offset) {
  if (offset < 0 || offset + 2 > bytes.size()) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.constData()) + offset;
  return (uint32_t{p[0]} << 8) | p[1];
}
uint32_t readU32(const QByteArray& bytes, int offset) {
  return (readU16(bytes, offset) << 16) | readU16(bytes, offset + 2);
}
void appendU16(QByteArray& bytes, uint32_t value) {
  bytes.append(static_cast<char>((value >> 8) & 0xff));
  bytes.append(static_cast<char>(value & 0xff));
}
void appendU32(QByteArray& bytes, uint32_t value) {
  appendU16(bytes, value >> 16);
  appendU16(bytes, value & 0xffff);
}

// The table `tag` of an sfnt file, or empty.
QByteArray sfntTable(const QByteArray& sfnt, const char* tag) {
  const int count = static_cast<int>(readU16(sfnt, 4));
  for (int i = 0; i < count; ++i) {
    const int entry = 12 + 16 * i;
    if (entry + 16 > sfnt.size()) break;
    if (sfnt.mid(entry, 4) != QByteArray(tag, 4)) continue;
    const auto offset = static_cast<qsizetype>(readU32(sfnt, entry + 8));
    const auto length = static_cast<qsizetype>(readU32(sfnt, entry + 12));
    return offset + length <= sfnt.size() ? sfnt.mid(offset, length) : QByteArray();
  }
  return {};
}

// The glyphs ImGui rasterises: Latin (ImGui's default set), Greek, general punctuation and the mathematical operators,
// for names such as θ, λ, ‖·‖ and ∞ where a caller writes them.
const ImWchar kGlyphRanges[] = {0x0020, 0x00FF, 0x0370, 0x03FF, 0x2010, 0x205E, 0x2200, 0x22FF, 0};

}  // namespace

QByteArray sfntFromRawFont(const QRawFont& font) {
  if (!font.isValid()) return {};
  // What stb_truetype reads (outlines in glyf + loca, or CFF), in the directory's required tag order.
  static const char* const kTags[] = {"CFF ", "GPOS", "OS/2", "cmap", "glyf", "head",
                                      "hhea", "hmtx", "kern", "loca", "maxp"};
  std::vector<std::pair<const char*, QByteArray>> tables;
  for (const char* tag : kTags) {
    QByteArray data = font.fontTable(tag);
    if (!data.isEmpty()) tables.emplace_back(tag, std::move(data));
  }
  auto has = [&](const char* tag) {
    return std::any_of(tables.begin(), tables.end(), [&](const auto& table) { return qstrcmp(table.first, tag) == 0; });
  };
  const bool trueType = has("glyf") && has("loca");
  if (!has("cmap") || !has("head") || !has("hhea") || !has("hmtx") || (!trueType && !has("CFF "))) return {};

  const auto count = static_cast<uint32_t>(tables.size());
  uint32_t powerOfTwo = 1, log2 = 0;
  while (powerOfTwo * 2 <= count) {
    powerOfTwo *= 2;
    ++log2;
  }
  QByteArray file;
  appendU32(file, trueType ? 0x00010000u : 0x4F54544Fu);  // 'OTTO' for CFF outlines
  appendU16(file, count);
  appendU16(file, powerOfTwo * 16);  // searchRange, entrySelector, rangeShift: the binary-search hints
  appendU16(file, log2);
  appendU16(file, count * 16 - powerOfTwo * 16);
  uint32_t offset = 12 + 16 * count;
  for (const auto& [tag, data] : tables) {
    QByteArray padded = data;
    while (padded.size() % 4 != 0) padded.append('\0');
    uint32_t checksum = 0;
    for (int i = 0; i < padded.size(); i += 4) checksum += readU32(padded, i);
    file.append(tag, 4);
    appendU32(file, checksum);
    appendU32(file, offset);
    appendU32(file, static_cast<uint32_t>(data.size()));
    offset += static_cast<uint32_t>(padded.size());
  }
  for (const auto& table : tables) {
    file.append(table.second);
    while (file.size() % 4 != 0) file.append('\0');
  }
  return file;
}

float imguiSizeForEm(const QByteArray& sfnt, double emPixels) {
  const QByteArray head = sfntTable(sfnt, "head"), hhea = sfntTable(sfnt, "hhea");
  const auto unitsPerEm = static_cast<int>(readU16(head, 18));
  const auto ascender = static_cast<int16_t>(readU16(hhea, 4));
  const auto descender = static_cast<int16_t>(readU16(hhea, 6));
  if (unitsPerEm <= 0 || ascender - descender <= 0) return static_cast<float>(emPixels);
  return static_cast<float>(emPixels * (ascender - descender) / unitsPerEm);
}

ImGuiQtBridge::~ImGuiQtBridge() {
  shutdown();
}

void ImGuiQtBridge::init(const QFont& font, float devicePixelRatio, Renderer renderer) {
  renderer_ = renderer;
  const QRawFont raw = QRawFont::fromFont(font);
  fontData_ = sfntFromRawFont(raw);
  if (fontData_.isEmpty()) {
    std::fprintf(stderr,
                 "descentlab: the geometry playground cannot read the outlines of the font \"%s\"; it draws with "
                 "Dear ImGui's built-in font\n",
                 font.family().toUtf8().constData());
    fontSizePixels_ = 13.0f;  // the built-in font's own size, where it is sharp
  } else {
    fontSizePixels_ = imguiSizeForEm(fontData_, raw.pixelSize());
  }
  context_ = ImGui::CreateContext();
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
#if !DESCENTLAB_IMGUI_KEY_EVENTS
  for (const auto& pair : kKeys) io.KeyMap[pair.imgui] = legacyIndex(pair.imgui);
#endif
  buildFonts(devicePixelRatio);
  if (renderer_ == Renderer::openGL) ImGui_ImplOpenGL3_Init("#version 330 core");
}

// High DPI: ImGui lays out in logical pixels (DisplaySize) and draws at the device's (DisplayFramebufferScale); the
// font is rasterised at the device's resolution and drawn at its logical size, so text stays sharp at 2x.
void ImGuiQtBridge::buildFonts(float ratio) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig config;
  config.SizePixels = fontSizePixels_ * ratio;
  if (fontData_.isEmpty()) {
    io.Fonts->AddFontDefault(&config);
  } else {
    config.FontDataOwnedByAtlas = false;  // the bytes stay in fontData_, for a rebuild at another ratio
    config.PixelSnapH = true;             // crisp stems at small sizes, like Qt's hinted text
    std::snprintf(config.Name, sizeof config.Name, "widget font");
    io.Fonts->AddFontFromMemoryTTF(fontData_.data(), static_cast<int>(fontData_.size()), config.SizePixels, &config,
                                   kGlyphRanges);
  }
  io.Fonts->Build();
  io.FontGlobalScale = 1.0f / ratio;
  fontRatio_ = ratio;
}

void ImGuiQtBridge::shutdown() {
  if (!context_) return;
  ImGui::SetCurrentContext(context_);
  if (renderer_ == Renderer::openGL) ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext(context_);
  context_ = nullptr;
}

void ImGuiQtBridge::setCurrent() const {
  ImGui::SetCurrentContext(context_);
}

bool ImGuiQtBridge::mouseMove(const QMouseEvent& event) {
  if (!context_) return false;
  ImGui::SetCurrentContext(context_);
  const ImVec2 position = positionOf(event);
#if DESCENTLAB_IMGUI_MOUSE_EVENTS
  ImGui::GetIO().AddMousePosEvent(position.x, position.y);
#else
  ImGui::GetIO().MousePos = position;
#endif
  return true;
}

// The position, and the button's new state (left, right and middle: ImGui's buttons 0, 1 and 2).
bool ImGuiQtBridge::mouseButton(const QMouseEvent& event, bool pressed) {
  if (!context_) return false;
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 position = positionOf(event);
  int button = -1;
  if (event.button() == Qt::LeftButton) button = 0;
  if (event.button() == Qt::RightButton) button = 1;
  if (event.button() == Qt::MiddleButton) button = 2;
#if DESCENTLAB_IMGUI_MOUSE_EVENTS
  io.AddMousePosEvent(position.x, position.y);
  if (button >= 0) io.AddMouseButtonEvent(button, pressed);
#else
  io.MousePos = position;
  if (button >= 0) {
    // A click whose press and release both arrive before the next frame (a quick tap, a scripted click) would never
    // be seen down: the release then waits for the frame after the one that sees the press.
    if (pressed) {
      pressUnseen_[button] = true;
      releaseDeferred_[button] = false;
      io.MouseDown[button] = true;
    } else if (pressUnseen_[button]) {
      releaseDeferred_[button] = true;
    } else {
      io.MouseDown[button] = false;
    }
  }
#endif
  return true;
}

bool ImGuiQtBridge::wheel(const QWheelEvent& event) {
  if (!context_) return false;
  ImGui::SetCurrentContext(context_);
  const float steps = static_cast<float>(event.angleDelta().y()) / 120.0f;
  // The wheel scrolls what is under the pointer: its position comes with the event.
  const ImVec2 position(static_cast<float>(event.position().x()), static_cast<float>(event.position().y()));
#if DESCENTLAB_IMGUI_MOUSE_EVENTS
  ImGui::GetIO().AddMousePosEvent(position.x, position.y);
  ImGui::GetIO().AddMouseWheelEvent(0.0f, steps);
#else
  ImGui::GetIO().MousePos = position;
  ImGui::GetIO().MouseWheel += steps;
#endif
  return true;
}

bool ImGuiQtBridge::key(const QKeyEvent& event, bool pressed) {
  if (!context_) return false;
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  const KeyPair* pair = findKey(event.key());
  const bool ctrl = (event.modifiers() & Qt::ControlModifier) != 0;
  const bool shift = (event.modifiers() & Qt::ShiftModifier) != 0;
  const bool alt = (event.modifiers() & Qt::AltModifier) != 0;
#if DESCENTLAB_IMGUI_KEY_EVENTS
  // The modifiers first, so a shortcut (Ctrl+A) sees them with its key.
  io.AddKeyEvent(ImGuiMod_Ctrl, ctrl);
  io.AddKeyEvent(ImGuiMod_Shift, shift);
  io.AddKeyEvent(ImGuiMod_Alt, alt);
  if (pair) io.AddKeyEvent(pair->imgui, pressed);
#else
  if (pair) io.KeysDown[legacyIndex(pair->imgui)] = pressed;
  io.KeyCtrl = ctrl;
  io.KeyShift = shift;
  io.KeyAlt = alt;
#endif
  if (pressed) {
    for (const QChar character : event.text()) {
      if (character.isPrint()) io.AddInputCharacterUTF16(character.unicode());
    }
  }
  return true;
}

void ImGuiQtBridge::newFrame(int width, int height, float ratio, float deltaSeconds) {
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DisplayFramebufferScale = ImVec2(ratio, ratio);
  io.DeltaTime = deltaSeconds;
  if (ratio != fontRatio_) {
    buildFonts(ratio);
    if (renderer_ == Renderer::openGL) {
      ImGui_ImplOpenGL3_DestroyFontsTexture();
      ImGui_ImplOpenGL3_CreateFontsTexture();
    }
  }
  if (renderer_ == Renderer::openGL) ImGui_ImplOpenGL3_NewFrame();
#if !DESCENTLAB_IMGUI_MOUSE_EVENTS
  for (int button = 0; button < 3; ++button) {
    if (releaseDeferred_[button] && !pressUnseen_[button]) {
      io.MouseDown[button] = false;
      releaseDeferred_[button] = false;
    }
  }
#endif
  ImGui::NewFrame();
#if !DESCENTLAB_IMGUI_MOUSE_EVENTS
  for (bool& unseen : pressUnseen_) unseen = false;
#endif
}

void ImGuiQtBridge::render() {
  ImGui::Render();
  if (renderer_ == Renderer::openGL) ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
#if !DESCENTLAB_IMGUI_MOUSE_EVENTS
  ImGui::GetIO().MouseWheel = 0;  // the wheel's steps were for this frame
#endif
}

}  // namespace descentlab::widgets
