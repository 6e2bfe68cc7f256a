"""The front tool loop's pure rules (no Django): the ``preActorDirector`` config and its
skills (``config``, ``skills``), the menu of tools (``menu``), reading a controller's call
(``requests``), the step cap and the shared Actor budget (``budget``), the failure table
(``fallbacks``), which segment gets a picture (``visual_beat``), the image-prompt block
(``image_prompt``), the controller's prompt and messages (``prompt``), and the driver over
injected ports (``loop``, ``ports``, ``steps``, ``record``). ``docs/front-loop.md``."""
