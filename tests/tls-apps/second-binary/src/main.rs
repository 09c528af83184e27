#[path = "../../app.rs"]
mod app;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    app::main()
}
