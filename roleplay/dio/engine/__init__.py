"""DIO's pure rules: derived ids, the backend protocol, the slot replacement rules."""
