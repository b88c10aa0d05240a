"""The record layer: the recorder (watches, receive times), the timeline (runs, gaps, the table), the pod vocabulary (pods) and kubectl's READY/STATUS (podstatus)."""
