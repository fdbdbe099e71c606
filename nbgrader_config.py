"""nbgrader settings for this repository: the course is built in dist/course/.

`python -m grading release` writes dist/course/ with its own nbgrader_config.py (how the
course is graded); this file points nbgrader's JupyterLab extension (the formgrader) at
that course when JupyterLab runs from here, and keeps it from warning that no
configuration exists. The student edition ships a settings-free copy instead.
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides get_config)
course = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist", "course")
c.CourseDirectory.root = course
load_subconfig(os.path.join(course, "nbgrader_config.py"))  # noqa: F821 (ignored if absent)
