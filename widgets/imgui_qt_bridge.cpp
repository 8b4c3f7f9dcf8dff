#include "widgets/imgui_qt_bridge.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>

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

}  // namespace

ImGuiQtBridge::~ImGuiQtBridge() {
  shutdown();
}

void ImGuiQtBridge::init(float fontPixelSize, float devicePixelRatio) {
  context_ = ImGui::CreateContext();
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
#if !DESCENTLAB_IMGUI_KEY_EVENTS
  for (const auto& pair : kKeys) io.KeyMap[pair.imgui] = legacyIndex(pair.imgui);
#endif
  // High DPI: ImGui lays out in logical pixels (DisplaySize) and draws at the device's (DisplayFramebufferScale); the
  // font is rasterised at the device's resolution and drawn at its logical size, so text stays sharp at 2x.
  ImFontConfig font;
  font.SizePixels = fontPixelSize * devicePixelRatio;
  io.Fonts->AddFontDefault(&font);
  io.FontGlobalScale = 1.0f / devicePixelRatio;
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

void ImGuiQtBridge::shutdown() {
  if (!context_) return;
  ImGui::SetCurrentContext(context_);
  ImGui_ImplOpenGL3_Shutdown();
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
  if (button >= 0) io.MouseDown[button] = pressed;
#endif
  return true;
}

bool ImGuiQtBridge::wheel(const QWheelEvent& event) {
  if (!context_) return false;
  ImGui::SetCurrentContext(context_);
  const float steps = static_cast<float>(event.angleDelta().y()) / 120.0f;
#if DESCENTLAB_IMGUI_MOUSE_EVENTS
  ImGui::GetIO().AddMouseWheelEvent(0.0f, steps);
#else
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
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
}

void ImGuiQtBridge::render() {
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
#if !DESCENTLAB_IMGUI_MOUSE_EVENTS
  ImGui::GetIO().MouseWheel = 0;  // the wheel's steps were for this frame
#endif
}

}  // namespace descentlab::widgets
