"""Text-completion servers (KoboldCpp, llama.cpp's ``/completion``, OpenAI ``/v1/completions``):
instruct and context templates that turn the chat prompt into one text, and the samplers such
servers take. The pure parts are in ``engine``; the tenant's imported templates are rows of
``models.InstructTemplate`` (``docs/llm.md``, "Text-completion servers")."""
