"""The images capability's pure rules: what a request may ask, what evidence lets an image be
shown, what bytes may be stored, which addresses may be fetched. No Django, DRF or Channels."""
