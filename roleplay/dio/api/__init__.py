"""DIO's HTTP doors: a conversation's REST routes (``conversation``) and the seed's protocol
endpoints (``protocol``, mounted at ``/v1/`` by ``protocol_urls``)."""
