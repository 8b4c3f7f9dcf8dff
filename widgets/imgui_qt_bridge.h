#pragma once
// Dear ImGui inside a Qt OpenGL widget: the ImGui context and its OpenGL 3 renderer, Qt's mouse, wheel and key events
// turned into ImGui input, and the frame's start and draw. The widget owns one bridge and calls it from its
// initializeGL, event handlers and paintGL; what the frame shows is the widget's business.
//
// Input goes through io.AddMousePosEvent / AddMouseButtonEvent / AddMouseWheelEvent (Dear ImGui 1.87+) and
// io.AddKeyEvent with ImGuiMod_* (1.89+) where the ImGui version has them; older versions (Debian 12 ships 1.86) get
// the fields they read instead (io.MousePos, io.MouseDown, io.MouseWheel, io.KeyMap / io.KeysDown, io.KeyCtrl...).

struct ImGuiContext;
class QKeyEvent;
class QMouseEvent;
class QWheelEvent;

namespace descentlab::widgets {

class ImGuiQtBridge {
 public:
  ImGuiQtBridge() = default;
  // Calls shutdown(): hand the bridge back with the widget's OpenGL context current (see shutdown).
  ~ImGuiQtBridge();
  ImGuiQtBridge(const ImGuiQtBridge&) = delete;
  ImGuiQtBridge& operator=(const ImGuiQtBridge&) = delete;

  // Creates the ImGui context (no .ini file, the key map) with the default font rasterised at `fontPixelSize` times
  // `devicePixelRatio` and drawn at its logical size, and the OpenGL 3.3 renderer. The widget's OpenGL context must
  // be current. Leaves the new ImGui context current, for the caller's style.
  void init(float fontPixelSize, float devicePixelRatio);
  // Destroys the renderer and the ImGui context; the widget's OpenGL context must be current. Nothing before init.
  void shutdown();
  bool ready() const { return context_ != nullptr; }
  // Makes this bridge's ImGui context the current one (ImGui keeps one current context per process).
  void setCurrent() const;

  // Qt's input into ImGui. Each returns false, forwarding nothing, before init; true when the widget should draw a
  // frame to show the effect.
  bool mouseMove(const QMouseEvent& event);
  bool mouseButton(const QMouseEvent& event, bool pressed);
  bool wheel(const QWheelEvent& event);
  // The key (when ImGui uses it), the modifiers, and on a press the text it types.
  bool key(const QKeyEvent& event, bool pressed);

  // Starts a frame of `width` x `height` logical pixels drawn at `ratio` device pixels each, `deltaSeconds` after
  // the last one; the ImGui calls of the frame follow.
  void newFrame(int width, int height, float ratio, float deltaSeconds);
  // Ends the frame and draws it into the current OpenGL framebuffer.
  void render();

 private:
  ImGuiContext* context_ = nullptr;
};

}  // namespace descentlab::widgets
