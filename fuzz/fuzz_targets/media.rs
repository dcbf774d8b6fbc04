#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| session_doctor_fuzz::targets::media(data));
