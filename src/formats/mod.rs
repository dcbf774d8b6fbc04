//! One adapter per agent format.
