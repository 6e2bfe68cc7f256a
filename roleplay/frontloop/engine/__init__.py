"""The front tool loop's pure rules (no Django): the ``preActorDirector`` config and its
skills (``config``, ``skills``), the menu of tools (``menu``), reading a controller's call
(``requests``), the step cap and the shared Actor budget (``budget``), the failure table
(``fallbacks``), which segment gets a picture (``visual_beat``), the image-prompt block
(``image_prompt``), the controller's prompt and messages (``prompt``), and the driver over
injected ports (``loop``, ``ports``, ``steps``, ``record``). ``docs/front-loop.md``."""

from .config import DirectorConfig, parse_director
from .errors import DirectorInvalid
from .loop import LoopSettings, run_front_loop
from .ports import ControllerError, FrontPorts, ScheduleReceipt, SegmentResult
from .record import FrontLoopOutcome, LoopRecord, Segment
from .requests import ToolRequest

__all__ = [
    "ControllerError",
    "DirectorConfig",
    "DirectorInvalid",
    "FrontLoopOutcome",
    "FrontPorts",
    "LoopRecord",
    "LoopSettings",
    "ScheduleReceipt",
    "Segment",
    "SegmentResult",
    "ToolRequest",
    "parse_director",
    "run_front_loop",
]
